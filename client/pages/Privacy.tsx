import { LINKS } from "../../content/site/links";
import { PRIVACY, PRIVACY_UPDATED, type LegalSection } from "../../content/site/legal";
import { PageHero } from "../components/PageHero";
import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Privacy Policy — Citizen Wallet",
    description:
      "How Citizen Wallet handles personal data: the intro request form, payments through Stripe, blockchain transactions and your rights.",
  };
}

export default function Privacy(_props: PageProps) {
  return (
    <>
      <PageHero title={PRIVACY.title} lead={PRIVACY.lead}>
        <p className="text-sm font-medium text-slate-600">Last updated: {PRIVACY_UPDATED}</p>
      </PageHero>
      <article className="mx-auto max-w-3xl px-4 py-16 sm:px-6 lg:px-8">
        {PRIVACY.sections.map((section) => (
          <Section key={section.id} section={section} />
        ))}
        <section aria-labelledby="privacy-contact" className="mt-12 rounded-2xl bg-slate-50 p-6">
          <h2 id="privacy-contact" className="text-2xl font-bold text-slate-900">{PRIVACY.contactTitle}</h2>
          <p className="mt-3 leading-relaxed text-slate-700">
            {PRIVACY.contactText}{" "}
            <a href={`mailto:${LINKS.contactEmail}`} className="font-semibold text-brand-700 underline hover:text-brand-600">
              {LINKS.contactEmail}
            </a>
            .
          </p>
        </section>
      </article>
    </>
  );
}

function Section({ section }: { section: LegalSection }) {
  const headingId = `privacy-${section.id}`;
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
