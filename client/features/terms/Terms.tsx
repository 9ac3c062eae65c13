import { Link } from "react-router";
import { TERMS } from "../../../content/site/legal";
import { LegalContact, LegalSection } from "../../components/LegalText";
import { PageHero } from "../../components/Bands";
import type { PageMeta, PageProps, TermsData } from "../../lib/types";
import { longDate } from "../../lib/format";

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
          <LegalSection key={section.id} section={section} idPrefix="terms" />
        ))}
        <p className="mt-12 leading-relaxed text-slate-700">
          How we handle personal data is described in our{" "}
          <Link to="/privacy" className="font-semibold text-brand-700 underline hover:text-brand-600">Privacy Policy</Link>.
        </p>
        <LegalContact id="terms-contact" title={TERMS.contactTitle} text={TERMS.contactText} />
      </article>
    </>
  );
}
