import { PRIVACY, PRIVACY_UPDATED } from "../../../content/site/legal";
import { LegalContact, LegalSection } from "../../components/LegalText";
import { PageHero } from "../../components/Bands";
import type { PageMeta, PageProps } from "../../lib/types";

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
          <LegalSection key={section.id} section={section} idPrefix="privacy" />
        ))}
        <LegalContact id="privacy-contact" title={PRIVACY.contactTitle} text={PRIVACY.contactText} />
      </article>
    </>
  );
}
