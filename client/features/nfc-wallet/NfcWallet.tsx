import { ArrowRight, ChartLine } from "lucide-react";
import { Link } from "react-router";
import nfcCard from "../../../content/images/products/nfc-card.svg";
import { LINKS } from "../../../content/site/links";
import { NFC_AUDIENCES, NFC_STEPS, NFC_TEXT } from "../../../content/site/products";
import { ExternalLink } from "../../components/ExternalLink";
import { IconCards } from "../../components/Grids";
import { NfcAudienceCard } from "./NfcAudienceCard";
import { CallToAction, OUTLINE_LINK, PageHero } from "../../components/Bands";
import { Icon } from "../../lib/icons/Icon";
import { NFC_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "NFC Wallet — Citizen Wallet",
    description:
      "Tap-to-pay NFC cards for community currencies: simple for participants, live tracking for organisers and phone-based payments for sales points.",
  };
}

export default function NfcWallet(_props: PageProps) {
  return (
    <>
      <PageHero title="NFC Wallet" lead={NFC_TEXT.lead}>
        <div className="flex flex-col justify-center gap-3 sm:flex-row">
          <button type="button" className="rounded-lg bg-brand-600 px-6 py-3 font-semibold text-white hover:bg-brand-700">
            {NFC_TEXT.getStarted}
          </button>
          <button type="button" className="rounded-lg border border-slate-300 bg-white px-6 py-3 font-semibold text-slate-800 hover:bg-slate-50">
            {NFC_TEXT.contactSales}
          </button>
        </div>
      </PageHero>

      <section aria-labelledby="steps-heading" className="mx-auto grid max-w-7xl items-center gap-12 px-4 py-16 sm:px-6 lg:grid-cols-2 lg:px-8">
        <img
          src={nfcCard}
          alt={NFC_TEXT.imageAlt}
          width={480}
          height={360}
          className="mx-auto h-auto w-full max-w-md"
        />
        <div>
          <h2 id="steps-heading" className="text-3xl font-bold text-slate-900">{NFC_TEXT.stepsTitle}</h2>
          <IconCards
            as="ol"
            look={{
              list: "mt-8 space-y-6",
              item: "flex gap-4",
              badge: "flex h-12 w-12 flex-none items-center justify-center rounded-xl bg-emerald-50 text-emerald-700",
              title: "text-lg font-semibold text-slate-900",
              text: "mt-1 text-slate-600",
              beside: true,
            }}
            items={NFC_STEPS.map((step, i) => ({
              key: step.title,
              icon: <Icon set={NFC_ICONS} name={step.icon} className="h-6 w-6" aria-hidden="true" />,
              title: (
                <>
                  <span className="text-slate-500">{i + 1}. </span>
                  {step.title}
                </>
              ),
              text: step.description,
            }))}
          />
        </div>
      </section>

      <section aria-labelledby="audiences-heading" className="bg-slate-50">
        <div className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
          <h2 id="audiences-heading" className="text-center text-3xl font-bold text-slate-900">{NFC_TEXT.audiencesTitle}</h2>
          <div className="mt-12 grid gap-8 md:grid-cols-3">
            {NFC_AUDIENCES.map((audience) => (
              <NfcAudienceCard key={audience.id} audience={audience} />
            ))}
          </div>
        </div>
      </section>

      <section aria-labelledby="video-heading" className="mx-auto max-w-4xl px-4 py-16 text-center sm:px-6 lg:px-8">
        <h2 id="video-heading" className="text-3xl font-bold text-slate-900">{NFC_TEXT.videoTitle}</h2>
        <p className="mt-4 text-lg text-slate-600">{NFC_TEXT.videoLead}</p>
        <div className="mt-8 flex justify-center">
          <iframe
            src={LINKS.nfcVideo}
            title={NFC_TEXT.videoFrameTitle}
            width={640}
            height={360}
            loading="lazy"
            allow="accelerometer; clipboard-write; encrypted-media; gyroscope; picture-in-picture"
            referrerPolicy="strict-origin-when-cross-origin"
            allowFullScreen
            className="aspect-video h-auto w-full max-w-[640px] rounded-2xl border-0 shadow-lg"
          />
        </div>
        <p className="mt-8 text-slate-700">{NFC_TEXT.dashboardLead}</p>
        <ExternalLink
          href={LINKS.dashboard}
          className="mt-4 inline-flex items-center gap-2 rounded-lg border border-brand-600 px-5 py-2.5 font-semibold text-brand-700 hover:bg-brand-50"
        >
          <ChartLine className="h-5 w-5" aria-hidden="true" />
          {NFC_TEXT.dashboardLink}
        </ExternalLink>
      </section>

      <CallToAction
        id="nfc-cta-heading"
        title={NFC_TEXT.ctaTitle}
        text={NFC_TEXT.ctaText}
        band="bg-gradient-to-br from-brand-600 to-brand-700"
        lineColour="text-brand-50"
      >
        <Link to="/contact" className="inline-flex items-center justify-center gap-2 rounded-lg bg-white px-6 py-3 font-semibold text-brand-700 hover:bg-brand-50">
          Request an Intro
          <ArrowRight className="h-4 w-4" aria-hidden="true" />
        </Link>
        <Link to="/pricing" className={OUTLINE_LINK}>
          See Pricing
        </Link>
      </CallToAction>
    </>
  );
}
