import { CalendarDays, Mail } from "lucide-react";
import { CONTACT_TEXT } from "./content";
import { LINKS } from "../../../content/site/links";
import { ContactForm } from "./ContactForm";
import { ExternalLink } from "../../components/ExternalLink";
import { PageHero } from "../../components/Bands";
import type { ContactData, PageMeta, PageProps } from "../../lib/types";

export function meta(data: ContactData | undefined): PageMeta {
  return {
    // A refused post says so first: the title is read as the page loads.
    title: `${data?.error ? "Error: " : ""}Request an Intro — Citizen Wallet`,
    description:
      "Request an intro: tell Citizen Wallet about your community, whether local currency, loyalty, events or NFC cards, and we will get back to you.",
  };
}

export default function Contact({ data }: PageProps<ContactData>) {
  return (
    <>
      <PageHero title={CONTACT_TEXT.title} lead={CONTACT_TEXT.lead} />
      <div className="mx-auto grid max-w-6xl gap-12 px-4 py-16 sm:px-6 lg:grid-cols-[2fr_1fr] lg:px-8">
        <section aria-labelledby="form-heading" className="rounded-2xl border border-slate-200 bg-white p-6 shadow-sm sm:p-8">
          <h2 id="form-heading" className="mb-6 text-2xl font-bold text-slate-900">About Your Community</h2>
          <ContactForm initial={data ?? {}} />
        </section>
        <aside aria-labelledby="next-heading" className="space-y-8">
          <section>
            <h2 id="next-heading" className="text-xl font-bold text-slate-900">{CONTACT_TEXT.asideTitle}</h2>
            <ol className="mt-4 space-y-4">
              {CONTACT_TEXT.asideSteps.map((step, i) => (
                <li key={step} className="flex gap-3 text-slate-700">
                  <span className="flex h-7 w-7 flex-none items-center justify-center rounded-full bg-brand-600 text-sm font-semibold text-white">
                    {i + 1}
                  </span>
                  <span>{step}</span>
                </li>
              ))}
            </ol>
          </section>
          <section className="rounded-2xl bg-slate-50 p-6">
            <h2 className="text-lg font-semibold text-slate-900">Other ways to reach us</h2>
            <p className="mt-3 flex items-start gap-2 text-slate-700">
              <Mail className="mt-1 h-4 w-4 flex-none text-brand-700" aria-hidden="true" />
              <span>
                {CONTACT_TEXT.emailPrompt}{" "}
                <a href={`mailto:${LINKS.contactEmail}`} className="font-semibold text-brand-700 underline hover:text-brand-600">
                  {LINKS.contactEmail}
                </a>
              </span>
            </p>
            <p className="mt-3 flex items-start gap-2 text-slate-700">
              <CalendarDays className="mt-1 h-4 w-4 flex-none text-brand-700" aria-hidden="true" />
              <ExternalLink href={LINKS.bookCall} className="font-semibold text-brand-700 underline hover:text-brand-600">
                Book a Call
              </ExternalLink>
            </p>
          </section>
        </aside>
      </div>
    </>
  );
}
