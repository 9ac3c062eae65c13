// Pricing data (spec sections 3, 7 and 9): the three hosted plans and the
// free self-hosted option. How a plan is paired with a Stripe price is
// client/features/pricing/prices.ts.
import type { Billing, BillingInterval, PlanItem, PricingPlan, SelfHostedOption } from "../../../content/site/types";
import { pricesFailed } from "../../../content/site/messages.json";

export const BILLING_INTERVAL: Record<Billing, BillingInterval> = { monthly: "month", yearly: "year" };
export const BILLING_OPTIONS: { value: Billing; label: string }[] = [
  { value: "monthly", label: "Monthly" },
  { value: "yearly", label: "Yearly" },
];

const FEATURE = {
  discord: { label: "Discord wallet", detail: "A wallet bot in your Discord server: members send and check tokens with slash commands." },
  communitySupport: { label: "Community support", detail: "Help from the team and other organisers in our public Discord channels." },
  mobile: { label: "Mobile app wallet", detail: "Your community token in the Citizen Wallet app for iOS and Android, with vouchers, QR codes and contacts." },
  nfc: { label: "NFC wallet support", detail: "Tap-to-pay cards and badges for events, markets and shops, with a point of sale for vendors." },
  domain: { label: "Custom domain", detail: "Run the web wallet on your own address, such as pay.yourcommunity.org." },
  plugins: { label: "Custom features and plugins", detail: "Top-up flows, shops and other plugins built or configured for your community." },
  directSupport: { label: "Direct support channel", detail: "A private channel with the team for setup questions and urgent issues." },
} satisfies Record<string, PlanItem>;

const LIMITATION = {
  noMobile: { label: "No mobile wallet", detail: "Members use the Discord wallet only. Community Standard adds the mobile app." },
  noNfc: { label: "No NFC wallet", detail: "Tap-to-pay cards come with Community Pro." },
  noDomain: { label: "No custom domain", detail: "The web wallet runs on a Citizen Wallet address. Community Pro adds your own domain." },
} satisfies Record<string, PlanItem>;

export const PLANS: PricingPlan[] = [
  {
    name: "Community Light",
    description: "Start a community token inside your Discord server.",
    icon: "MessageCircle",
    features: [FEATURE.discord, FEATURE.communitySupport],
    limitations: [LIMITATION.noMobile, LIMITATION.noNfc, LIMITATION.noDomain],
    popular: false,
    productName: "Community Light",
  },
  {
    name: "Community Standard",
    description: "Bring your currency to every member's phone as well as Discord.",
    icon: "Smartphone",
    features: [FEATURE.discord, FEATURE.mobile, FEATURE.communitySupport],
    limitations: [LIMITATION.noNfc, LIMITATION.noDomain],
    popular: true,
    productName: "Community Standard",
  },
  {
    name: "Community Pro",
    description: "Everything, including tap-to-pay cards and your own domain.",
    icon: "Crown",
    features: [FEATURE.discord, FEATURE.mobile, FEATURE.nfc, FEATURE.domain, FEATURE.plugins, FEATURE.directSupport],
    limitations: [],
    popular: false,
    productName: "Community Pro",
  },
];

export const INTERVAL_SUFFIX: Record<BillingInterval, string> = { month: "/month", year: "/year" };

/** The monthly view's yearly line: the price of this many monthly payments,
 *  then the words (client/features/pricing/prices.ts puts them together). */
export const YEARLY_LINE = { months: 10, words: "per year (save 2 months)" } as const;

/** Spec section 9 keeps this wording as it is (it disagrees with the 2-month line). */
export const YEARLY_BADGE = "Save 1 months";

export const SELF_HOSTED: SelfHostedOption = {
  name: "Self-Hosted",
  price: "Free",
  description: "Run the open-source Citizen Wallet stack on your own infrastructure.",
  icon: "Server",
  features: [
    "Open-source code you can audit and fork",
    "Deploy on the chains and servers you choose",
    "Community support on GitHub and Discord",
  ],
  linkLabel: "View on GitHub",
};

export const PRICING_TEXT = {
  lead: "Hosted plans for community currencies, billed monthly or yearly. Or run everything yourself for free.",
  loading: "Loading pricing...",
  error: pricesFailed,
  retry: "Try Again",
  noPrice: "Contact us for pricing",
  noPriceButton: "Contact Us",
  checkoutButton: "Get Started",
  popular: "Most Popular",
  customTitle: "Need something different?",
  customText: "Larger rollouts, city programmes and custom integrations are priced together with you.",
  customLink: "Get in Touch",
  ctznNote: "Pay your plan in CTZN and get up to 15% off monthly fees.",
};
