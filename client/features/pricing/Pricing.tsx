import { ArrowRight, Check, Coins, LoaderCircle, RefreshCw } from "lucide-react";
import { Link, useSearchParams } from "react-router";
import { LINKS } from "../../../content/site/links";
import { BILLING_INTERVAL, BILLING_OPTIONS, PLANS, PRICING_TEXT, SELF_HOSTED } from "./content";
import { ExternalLink } from "../../components/ExternalLink";
import { PageHero } from "../../components/Bands";
import { PricingPlanCard } from "./PricingPlanCard";
import { PricingToggle } from "./PricingToggle";
import { Icon } from "../../lib/icons/Icon";
import { PRICING_ICONS } from "./icons";
import { billingFromParam, matchPrice } from "./prices";
import type { PageMeta, PageProps, PricingData } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "Pricing — Citizen Wallet",
    description:
      "Community Light, Community Standard and Community Pro: hosted Citizen Wallet plans billed monthly or yearly, or self-host for free.",
  };
}

/** What the billing toggle changed, said to a screen reader. */
export function view(data: PricingData | undefined, search: URLSearchParams): string {
  if (data?.error) return PRICING_TEXT.error;
  const billing = billingFromParam(search.get("billing"));
  const label = BILLING_OPTIONS.find((o) => o.value === billing)?.label ?? billing;
  return `${label} prices shown`;
}

export default function Pricing({ data, state }: PageProps<PricingData>) {
  // The URL decides the view, so the server and the hydrating client agree.
  const [params] = useSearchParams();
  const billing = billingFromParam(params.get("billing"));

  const interval = BILLING_INTERVAL[billing];
  const prices = data?.prices ?? [];
  const failed = state === "error" || data?.error === true;

  return (
    <>
      <PageHero title="Pricing" lead={PRICING_TEXT.lead}>
        <PricingToggle value={billing} />
      </PageHero>

      <section aria-labelledby="plans-heading" className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
        <h2 id="plans-heading" className="sr-only">Hosted plans</h2>
        {!data && state === "loading" ? (
          <div role="status" className="flex items-center justify-center gap-3 py-16 text-slate-600">
            <LoaderCircle className="h-6 w-6 animate-spin text-brand-600" aria-hidden="true" />
            <p>{PRICING_TEXT.loading}</p>
          </div>
        ) : failed ? (
          <div className="mx-auto max-w-lg rounded-2xl border border-red-200 bg-red-50 p-8 text-center">
            <p role="alert" className="text-lg font-semibold text-red-800">{PRICING_TEXT.error}</p>
            <button
              type="button"
              onClick={() => window.location.reload()}
              className="mt-6 inline-flex items-center gap-2 rounded-lg bg-red-700 px-5 py-2.5 text-sm font-semibold text-white hover:bg-red-800"
            >
              <RefreshCw className="h-4 w-4" aria-hidden="true" />
              {PRICING_TEXT.retry}
            </button>
          </div>
        ) : (
          <div className="grid gap-8 pt-4 lg:grid-cols-3">
            {PLANS.map((plan) => (
              <PricingPlanCard key={plan.productName} plan={plan} price={matchPrice(plan, prices, interval)} />
            ))}
          </div>
        )}

        <p className="mx-auto mt-12 flex max-w-2xl items-center justify-center gap-2 text-center text-sm text-slate-700">
          <Coins className="h-5 w-5 flex-none text-amber-600" aria-hidden="true" />
          <span>
            {PRICING_TEXT.ctznNote}{" "}
            <Link to="/ctzn" className="font-semibold text-brand-700 underline hover:text-brand-600">About CTZN</Link>
          </span>
        </p>
      </section>

      <section aria-labelledby="self-hosted-heading" className="bg-slate-50">
        <div className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
          <article className="grid items-center gap-8 rounded-2xl border border-slate-200 bg-white p-8 shadow-sm md:grid-cols-[1fr_auto]">
            <div>
              <div className="flex flex-wrap items-center gap-3">
                <Icon set={PRICING_ICONS} name={SELF_HOSTED.icon} className="h-8 w-8 text-slate-700" aria-hidden="true" />
                <h2 id="self-hosted-heading" className="text-2xl font-bold text-slate-900">{SELF_HOSTED.name}</h2>
                <p className="rounded-full bg-emerald-100 px-3 py-1 text-sm font-semibold text-emerald-800">{SELF_HOSTED.price}</p>
              </div>
              <p className="mt-3 text-slate-600">{SELF_HOSTED.description}</p>
              <ul className="mt-4 grid gap-2 sm:grid-cols-3">
                {SELF_HOSTED.features.map((f) => (
                  <li key={f} className="flex items-start gap-2 text-sm text-slate-700">
                    <Check className="mt-0.5 h-4 w-4 flex-none text-emerald-600" aria-hidden="true" />
                    {f}
                  </li>
                ))}
              </ul>
            </div>
            <ExternalLink
              href={LINKS.selfHostRepo}
              className="inline-flex items-center justify-center gap-2 rounded-lg bg-slate-900 px-5 py-3 text-sm font-semibold text-white hover:bg-slate-700"
            >
              {SELF_HOSTED.linkLabel}
              <ArrowRight className="h-4 w-4" aria-hidden="true" />
            </ExternalLink>
          </article>
        </div>
      </section>

      <section aria-labelledby="custom-heading" className="mx-auto max-w-3xl px-4 py-16 text-center sm:px-6 lg:px-8">
        <h2 id="custom-heading" className="text-3xl font-bold text-slate-900">{PRICING_TEXT.customTitle}</h2>
        <p className="mt-4 text-lg text-slate-600">{PRICING_TEXT.customText}</p>
        <Link
          to="/contact"
          className="mt-8 inline-flex items-center gap-2 rounded-lg bg-brand-600 px-6 py-3 font-semibold text-white hover:bg-brand-700"
        >
          {PRICING_TEXT.customLink}
          <ArrowRight className="h-4 w-4" aria-hidden="true" />
        </Link>
      </section>
    </>
  );
}
