import { Check, Download } from "lucide-react";
import { Link } from "react-router";
import mobileApp from "../../../content/images/products/mobile-app.svg";
import {
  MOBILE_FEATURE_LISTS,
  MOBILE_HIGHLIGHTS,
  MOBILE_TEXT,
  PAYMENT_OPTIONS,
} from "../../../content/site/products";
import { IconCards } from "../../components/Grids";
import { MobileStoreButtons } from "../../components/MobileStoreButtons";
import { CallToAction, OUTLINE_LINK, PageHero } from "../../components/Bands";
import { Icon } from "../../lib/icons/Icon";
import { MOBILE_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "Mobile App — Citizen Wallet",
    description:
      "The Citizen Wallet app for iOS and Android: pay with digital vouchers, QR codes and contacts, with no gas fees or seed phrases.",
  };
}

export default function MobileApp(_props: PageProps) {
  return (
    <>
      <PageHero title="Mobile App" lead={MOBILE_TEXT.lead}>
        <h2 className="sr-only">{MOBILE_TEXT.downloadTitle}</h2>
        <MobileStoreButtons />
        <p className="mt-4 inline-flex items-center gap-2 text-sm font-medium text-slate-600">
          <Download className="h-4 w-4" aria-hidden="true" />
          {MOBILE_TEXT.downloads}
        </p>
      </PageHero>

      <section aria-labelledby="payment-heading" className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
        <div className="text-center">
          <h2 id="payment-heading" className="text-3xl font-bold text-slate-900">{MOBILE_TEXT.paymentTitle}</h2>
          <p className="mx-auto mt-4 max-w-2xl text-lg text-slate-600">{MOBILE_TEXT.paymentLead}</p>
        </div>
        <IconCards
          look={{
            list: "mt-12 grid gap-8 md:grid-cols-3",
            item: "rounded-2xl border border-slate-200 bg-white p-8 text-center shadow-sm",
            badge: "mx-auto flex h-14 w-14 items-center justify-center rounded-2xl bg-brand-50 text-brand-700",
            title: "mt-5 text-xl font-bold text-slate-900",
            text: "mt-3 text-slate-600",
          }}
          items={PAYMENT_OPTIONS.map((option) => ({
            key: option.title,
            icon: <Icon set={MOBILE_ICONS} name={option.icon} className="h-7 w-7" aria-hidden="true" />,
            title: option.title,
            text: option.description,
          }))}
        />
      </section>

      <section aria-labelledby="features-heading" className="bg-slate-50">
        <div className="mx-auto grid max-w-7xl items-center gap-12 px-4 py-16 sm:px-6 lg:grid-cols-[1fr_2fr] lg:px-8">
          <img
            src={mobileApp}
            alt={MOBILE_TEXT.imageAlt}
            width={360}
            height={480}
            loading="lazy"
            className="mx-auto h-auto w-full max-w-xs"
          />
          <div>
            <h2 id="features-heading" className="text-3xl font-bold text-slate-900">{MOBILE_TEXT.featuresTitle}</h2>
            <div className="mt-8 grid gap-8 sm:grid-cols-3">
              {MOBILE_FEATURE_LISTS.map((list) => (
                <div key={list.title}>
                  <h3 className="text-lg font-semibold text-slate-900">{list.title}</h3>
                  <ul className="mt-4 space-y-3">
                    {list.items.map((item) => (
                      <li key={item} className="flex items-start gap-2 text-sm text-slate-700">
                        <Check className="mt-0.5 h-4 w-4 flex-none text-emerald-600" aria-hidden="true" />
                        {item}
                      </li>
                    ))}
                  </ul>
                </div>
              ))}
            </div>
          </div>
        </div>
      </section>

      <section aria-labelledby="highlights-heading" className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
        <h2 id="highlights-heading" className="text-center text-3xl font-bold text-slate-900">{MOBILE_TEXT.highlightsTitle}</h2>
        <IconCards
          look={{
            list: "mt-12 grid gap-8 md:grid-cols-3",
            item: "flex gap-4",
            badge: "flex h-12 w-12 flex-none items-center justify-center rounded-xl bg-emerald-50 text-emerald-700",
            title: "text-lg font-semibold text-slate-900",
            text: "mt-1 text-slate-600",
            beside: true,
          }}
          items={MOBILE_HIGHLIGHTS.map((item) => ({
            key: item.title,
            icon: <Icon set={MOBILE_ICONS} name={item.icon} className="h-6 w-6" aria-hidden="true" />,
            title: item.title,
            text: item.description,
          }))}
        />
      </section>

      <CallToAction
        id="mobile-cta-heading"
        title={MOBILE_TEXT.ctaTitle}
        text={MOBILE_TEXT.ctaText}
        band="bg-slate-900"
        lineColour="text-slate-300"
      >
        <Link to="/pricing" className="rounded-lg bg-white px-6 py-3 font-semibold text-slate-900 hover:bg-slate-100">
          See Pricing
        </Link>
        <Link to="/contact" className={OUTLINE_LINK}>
          Request an Intro
        </Link>
      </CallToAction>
    </>
  );
}
