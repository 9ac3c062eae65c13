import type { ReactNode } from "react";
import { Link } from "react-router";

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

/** The call to action's second link: outlined, on the band's colour. */
export function OutlineLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Link to={to} className="rounded-lg border border-white/70 px-6 py-3 font-semibold text-white hover:bg-white/10">
      {children}
    </Link>
  );
}
