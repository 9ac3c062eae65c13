import type { LegalSection as LegalSectionData } from "../../content/site/types";
import { LINKS } from "../../content/site/links";

/** One section of a legal page: heading, paragraphs, an optional list. */
export function LegalSection({ section, idPrefix }: { section: LegalSectionData; idPrefix: string }) {
  const headingId = `${idPrefix}-${section.id}`;
  return (
    <section aria-labelledby={headingId} className="mt-12 first:mt-0">
      <h2 id={headingId} className="text-2xl font-bold text-slate-900">{section.title}</h2>
      {section.paragraphs.map((p) => (
        <p key={p} className="mt-4 leading-relaxed text-slate-700">{p}</p>
      ))}
      {section.list && (
        <ul className="mt-4 list-disc space-y-2 pl-6 text-slate-700">
          {section.list.map((item) => (
            <li key={item}>{item}</li>
          ))}
        </ul>
      )}
      {section.after && <p className="mt-4 leading-relaxed text-slate-700">{section.after}</p>}
    </section>
  );
}

/** The closing "questions? write to us" box of a legal page. */
export function LegalContact({ id, title, text }: { id: string; title: string; text: string }) {
  return (
    <section aria-labelledby={id} className="mt-12 rounded-2xl bg-slate-50 p-6">
      <h2 id={id} className="text-2xl font-bold text-slate-900">{title}</h2>
      <p className="mt-3 leading-relaxed text-slate-700">
        {text}{" "}
        <a href={`mailto:${LINKS.contactEmail}`} className="font-semibold text-brand-700 underline hover:text-brand-600">
          {LINKS.contactEmail}
        </a>
        .
      </p>
    </section>
  );
}
