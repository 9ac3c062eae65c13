import type { FormEvent } from "react";
import { Check, Info, X } from "lucide-react";
import { useId } from "react";
import { PRICING_ICONS } from "./icons";
import { formatPrice } from "../../lib/money";
import { yearlyFromMonthly, type ShownPrice } from "./prices";
import { INTERVAL_SUFFIX, PRICING_TEXT, YEARLY_BADGE } from "./content";
import type { PlanItem, PricingPlan } from "../../../content/site/types";
import type { ApiFailure, CheckoutCreated, CheckoutRequest } from "../../lib/types";
import { Tooltip } from "./Tooltip";

interface PricingPlanCardProps {
  plan: PricingPlan;
  /** The plan's price for the interval on show, if Stripe has one. */
  price: ShownPrice | undefined;
}

/** One hosted plan: price (or "Contact us for pricing"), checkout, and what
 *  is in and out of the plan, each line with an explaining tooltip. */
export function PricingPlanCard({ plan, price }: PricingPlanCardProps) {
  const headingId = useId();
  const Icon = PRICING_ICONS[plan.icon];
  return (
    <article
      aria-labelledby={headingId}
      className={`relative flex flex-col rounded-2xl border bg-white p-8 shadow-sm ${
        plan.popular ? "border-brand-600 ring-2 ring-brand-600 lg:-mt-4 lg:mb-4" : "border-slate-200"
      }`}
    >
      {plan.popular && (
        <p className="absolute -top-3.5 left-1/2 -translate-x-1/2 rounded-full bg-brand-600 px-4 py-1 text-xs font-semibold uppercase tracking-wide text-white">
          {PRICING_TEXT.popular}
        </p>
      )}
      <div className="flex items-center gap-3">
        <span className="flex h-11 w-11 items-center justify-center rounded-xl bg-brand-50 text-brand-700">
          <Icon className="h-6 w-6" aria-hidden="true" />
        </span>
        <h3 id={headingId} className="text-xl font-bold text-slate-900">{plan.name}</h3>
      </div>
      <p className="mt-4 text-slate-600">{plan.description}</p>

      <div className="mt-6 min-h-28">
        {price ? (
          <>
            <p className="flex items-baseline gap-1">
              <span className="text-4xl font-bold tracking-tight text-slate-900">{formatPrice(price.amount, price.currency)}</span>
              <span className="text-base font-medium text-slate-600">{INTERVAL_SUFFIX[price.interval]}</span>
            </p>
            {price.interval === "month" ? (
              <p className="mt-2 text-sm text-slate-600">{yearlyFromMonthly(price)}</p>
            ) : (
              <p className="mt-2">
                <span className="inline-block rounded-full bg-emerald-100 px-3 py-1 text-xs font-semibold text-emerald-800">
                  {YEARLY_BADGE}
                </span>
              </p>
            )}
          </>
        ) : (
          <p className="text-lg font-semibold text-slate-700">{PRICING_TEXT.noPrice}</p>
        )}
      </div>

      {price ? (
        <form method="post" action={CHECKOUT_ENDPOINT} onSubmit={openCheckout} className="mt-2">
          <input type="hidden" name="priceId" value={price.id} />
          <button
            type="submit"
            className={`w-full rounded-lg px-4 py-3 text-sm font-semibold ${
              plan.popular
                ? "bg-brand-600 text-white hover:bg-brand-700"
                : "border border-brand-600 text-brand-700 hover:bg-brand-50"
            }`}
          >
            {PRICING_TEXT.checkoutButton}
          </button>
        </form>
      ) : (
        <button
          type="button"
          disabled
          className="mt-2 w-full cursor-not-allowed rounded-lg bg-slate-200 px-4 py-3 text-sm font-semibold text-slate-600"
        >
          {PRICING_TEXT.noPriceButton}
        </button>
      )}

      <h4 className="mt-8 text-sm font-semibold uppercase tracking-wide text-slate-900">What&apos;s included</h4>
      <ul className="mt-3 space-y-3">
        {plan.features.map((item) => (
          <PlanLine key={item.label} item={item} included />
        ))}
      </ul>
      {plan.limitations.length > 0 && (
        <>
          <h4 className="mt-6 text-sm font-semibold uppercase tracking-wide text-slate-900">Limitations</h4>
          <ul className="mt-3 space-y-3">
            {plan.limitations.map((item) => (
              <PlanLine key={item.label} item={item} included={false} />
            ))}
          </ul>
        </>
      )}
    </article>
  );
}

const CHECKOUT_ENDPOINT = "/api/create-checkout-session";

/**
 * With JavaScript, Stripe Checkout opens in a new tab (spec section 7). The
 * tab is opened during the click, so no popup blocker stops it, and pointed
 * at Checkout once the session exists. A failure is only logged (spec
 * section 8). Without JavaScript the form posts and the server redirects.
 */
async function openCheckout(e: FormEvent<HTMLFormElement>) {
  e.preventDefault();
  const priceId = new FormData(e.currentTarget).get("priceId");
  const tab = window.open("", "_blank");
  try {
    const res = await fetch(CHECKOUT_ENDPOINT, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ priceId: String(priceId ?? "") } satisfies CheckoutRequest),
    });
    const body = (await res.json().catch(() => null)) as CheckoutCreated | ApiFailure | null;
    if (!res.ok || !body || !("url" in body) || typeof body.url !== "string") {
      throw new Error(body && "error" in body ? body.error : `checkout answered ${res.status}`);
    }
    if (tab) tab.location.href = body.url;
    else window.location.assign(body.url);
  } catch (err) {
    tab?.close();
    console.error("Error creating checkout session:", err);
  }
}

function PlanLine({ item, included }: { item: PlanItem; included: boolean }) {
  const Mark = included ? Check : X;
  return (
    <li className="flex items-start gap-3 text-sm">
      <Mark
        className={`mt-0.5 h-5 w-5 flex-none ${included ? "text-emerald-600" : "text-slate-400"}`}
        aria-hidden="true"
      />
      <span className={`flex-1 ${included ? "text-slate-800" : "text-slate-600"}`}>{item.label}</span>
      <Tooltip content={item.detail} align="end">
        <button
          type="button"
          aria-label={`About ${item.label}`}
          className="-m-1 rounded-full p-1 text-slate-500 hover:bg-slate-100 hover:text-slate-800"
        >
          <Info className="h-4 w-4" aria-hidden="true" />
        </button>
      </Tooltip>
    </li>
  );
}
