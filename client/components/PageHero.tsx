import type { ReactNode } from "react";

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
