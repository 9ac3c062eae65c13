// The pricing page's logic over its content (./content.ts): the
// billing toggle from the URL, and which Stripe price a plan shows.
import type { Billing, BillingInterval, PricingPlan } from "../../../content/site/types";
import { YEARLY_LINE } from "./content";
import { formatPrice } from "../../lib/money";
import type { PriceRecord } from "../../lib/types";

/** `?billing=yearly` selects yearly; anything else (or nothing) is monthly. */
export function billingFromParam(value: string | null): Billing {
  return value === "yearly" ? "yearly" : "monthly";
}

/** A price the page shows: one at an interval the toggle offers. */
export type ShownPrice = PriceRecord & { interval: BillingInterval };

/**
 * Spec section 7: a price fits a plan when its product name contains the
 * plan's name (case-insensitive) or its metadata.planName equals the plan's
 * productName, and its interval is the one the toggle shows. First fit wins.
 */
export function matchPrice(
  plan: Pick<PricingPlan, "name" | "productName">,
  prices: readonly PriceRecord[],
  interval: BillingInterval,
): ShownPrice | undefined {
  const name = plan.name.toLowerCase();
  return prices.find(
    (price): price is ShownPrice =>
      price.interval === interval &&
      ((price.product?.name ?? "").toLowerCase().includes(name) ||
        price.product?.metadata?.planName === plan.productName),
  );
}

/** The monthly view's yearly line, e.g. "$490 per year (save 2 months)". */
export function yearlyFromMonthly(monthly: Pick<PriceRecord, "amount" | "currency">): string {
  return `${formatPrice(monthly.amount * YEARLY_LINE.months, monthly.currency)} ${YEARLY_LINE.words}`;
}
