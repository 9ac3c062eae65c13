import type { ReactNode } from "react";

// The coloured bands that open and close a page. One module for both: the
// pages that end with a call to action all open with a hero, so the call
// to action adds no chunk of its own to their first load.

/** The coloured band at the top of most pages: the page's one h1 and a lead. */
export function PageHero({ title, lead, children }: { title: ReactNode; lead?: ReactNode; children?: ReactNode }) {
  return (
    <section className="bg-gradient-to-br from-brand-50 via-white to-emerald-50">
      <div className="mx-auto max-w-7xl px-4 py-16 text-center sm:px-6 sm:py-20 lg:px-8">
        <h1 className="text-4xl font-bold tracking-tight text-slate-900 sm:text-5xl">{title}</h1>
        {lead && <p className="mx-auto mt-6 max-w-3xl text-lg text-slate-600">{lead}</p>}
        {children && <div className="mt-8">{children}</div>}
      </div>
    </section>
  );
}

/** A page's closing call to action (the wallet pages end with one): a band
 *  in the page's own colours with a title, a line of text and its links. */
export function CallToAction({
  id,
  title,
  text,
  band,
  lineColour,
  children,
}: {
  /** The heading's id, which labels the section. */
  id: string;
  title: string;
  text: string;
  /** The band's background classes. */
  band: string;
  /** The text colour of the line under the title. */
  lineColour: string;
  /** The links, first the one the page most wants followed. */
  children: ReactNode;
}) {
  return (
    <section aria-labelledby={id} className={`${band} text-white`}>
      <div className="mx-auto max-w-3xl px-4 py-16 text-center sm:px-6 lg:px-8">
        <h2 id={id} className="text-3xl font-bold">
          {title}
        </h2>
        <p className={`mt-4 text-lg ${lineColour}`}>{text}</p>
        <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">{children}</div>
      </div>
    </section>
  );
}

/** The classes of the call to action's second link: outlined, on the
 *  band's colour. (A class name, not a component: this module imports no
 *  router, so the pages' chunks stay as they are.) */
export const OUTLINE_LINK = "rounded-lg border border-white/70 px-6 py-3 font-semibold text-white hover:bg-white/10";
