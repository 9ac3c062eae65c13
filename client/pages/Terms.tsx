import { Link } from "react-router";
import { LINKS } from "../../content/site/links";
import { TERMS, type LegalSection } from "../../content/site/legal";
import { PageHero } from "../components/PageHero";
import type { PageMeta, PageProps, TermsData } from "../lib/types";
import { longDate } from "../lib/format";

export function meta(): PageMeta {
  return {
    title: "Terms of Service — Citizen Wallet",
    description:
      "The terms for using Citizen Wallet: self-custodial wallets, community tokens, hosted plans billed through Stripe, acceptable use and liability.",
  };
}

export default function Terms({ data }: PageProps<TermsData>) {
  const updated = data?.today ? longDate(data.today) : null;
  return (
    <>
      <PageHero title={TERMS.title} lead={TERMS.lead}>
        {updated && <p className="text-sm font-medium text-slate-600">Last updated: {updated}</p>}
      </PageHero>
      <article className="mx-auto max-w-3xl px-4 py-16 sm:px-6 lg:px-8">
        {TERMS.sections.map((section) => (
          <Section key={section.id} section={section} />
        ))}
        <p className="mt-12 leading-relaxed text-slate-700">
          How we handle personal data is described in our{" "}
          <Link to="/privacy" className="font-semibold text-brand-700 underline hover:text-brand-600">Privacy Policy</Link>.
        </p>
        <section aria-labelledby="terms-contact" className="mt-12 rounded-2xl bg-slate-50 p-6">
          <h2 id="terms-contact" className="text-2xl font-bold text-slate-900">{TERMS.contactTitle}</h2>
          <p className="mt-3 leading-relaxed text-slate-700">
            {TERMS.contactText}{" "}
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
  const headingId = `terms-${section.id}`;
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
