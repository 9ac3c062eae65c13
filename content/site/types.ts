// The shapes of the site content: the shared files here (content/site/*.ts)
// and each page's own, client/features/<page>/content.ts. Content is data
// only: these types, values, JSON and images; nothing from client/ code or
// packages (what reads or derives from it lives beside it in the feature,
// or in client/lib/).

// ------------------------------------------------------------------- Icons

// An icon is named by its Lucide export name ("Users"), one set per page.
// client/features/<page>/icons.ts maps each set to the icons and is checked
// against it (every name resolves, no name left over), so a page's chunk
// carries only the icons that page shows.

export type HomeIcon =
  | "ArrowLeftRight"
  | "CalendarDays"
  | "Cloud"
  | "Coins"
  | "ContactRound"
  | "Gift"
  | "Globe"
  | "Handshake"
  | "Link2"
  | "MapPin"
  | "Network"
  | "Nfc"
  | "QrCode"
  | "Send"
  | "Store"
  | "Ticket"
  | "Trophy";
export type AboutIcon = "Accessibility" | "Eye" | "Leaf" | "Users";
export type CommunityIcon = "AtSign" | "BookOpen" | "Code" | "MessageCircle" | "MessagesSquare" | "Presentation" | "Video";
export type CtznIcon = "Coins" | "HandCoins" | "Sprout" | "Users";
export type PricingIcon = "Crown" | "MessageCircle" | "Server" | "Smartphone";
export type ServicesIcon = "Code" | "FileCode2" | "Headphones" | "ShieldCheck" | "Users" | "Wallet";
export type WalletsIcon = "Globe" | "MessageSquare" | "Nfc" | "Smartphone";
export type NfcIcon = "CalendarDays" | "CreditCard" | "HandCoins" | "Store" | "Users" | "Zap";
export type MobileIcon = "Contact" | "Globe" | "Layers" | "QrCode" | "ShieldCheck" | "Ticket";
export type DiscordIcon = "BadgeCheck" | "Gift" | "Languages" | "Lock" | "PartyPopper" | "Smartphone" | "Trophy" | "Vote" | "Wallet" | "Zap";

/** Every icon the content names. */
export type IconName =
  | HomeIcon
  | AboutIcon
  | CommunityIcon
  | CtznIcon
  | PricingIcon
  | ServicesIcon
  | WalletsIcon
  | NfcIcon
  | MobileIcon
  | DiscordIcon;

// -------------------------------------------------------------------- Home

/** Where a product or feature stands; every card on the site is Live today. */
export type Status = "Live" | "Beta" | "Coming";

/** The four groups the feature cards fall into. */
export type FeatureCategory = "Core" | "Physical" | "Business" | "Technical";

/** Two CSS colours for a left-to-right gradient. */
export interface Gradient {
  from: string;
  to: string;
}

export interface Feature {
  icon: HomeIcon;
  title: string;
  description: string;
  status: Status;
  category: FeatureCategory;
}

export interface UseCase {
  icon: HomeIcon;
  title: string;
  description: string;
  gradient: Gradient;
}

export interface Chain {
  name: string;
  /** URL of the logo (hashed asset). */
  logo: string;
}

export interface PaymentOption {
  icon: HomeIcon;
  title: string;
  description: string;
}

// ------------------------------------------------------------------- About

export interface Value {
  icon: AboutIcon;
  title: string;
  description: string;
}

export interface TimelineEntry {
  year: string;
  title: string;
  description: string;
}

export type PartnerCategory =
  | "Funding Partner"
  | "Strategic Partner"
  | "Community Partner"
  | "Ecosystem Partner"
  | "Community Fund"
  | "Integration Partner"
  | "Public Goods Funding"
  | "Quadratic Accelerator";

export interface Partner {
  name: string;
  category: PartnerCategory;
  description: string;
  /** The partner's own site, opened in a new tab. */
  url: string;
}

// --------------------------------------------------------------- Community

export interface Channel {
  name: string;
  /** What kind of channel it is, e.g. "Chat community". */
  kind: string;
  description: string;
  /** As shown, e.g. "2.5K members". */
  members: string;
  link: string;
  icon: CommunityIcon;
  gradient: Gradient;
}

export type ResourceType = "Docs" | "Tutorial" | "Forum" | "Event";

export interface Resource {
  title: string;
  description: string;
  /** Placeholder until the resources are published. */
  link: string;
  type: ResourceType;
  icon: CommunityIcon;
}

export interface Testimonial {
  name: string;
  role: string;
  content: string;
  rating: number;
}

// -------------------------------------------------------------------- CTZN

export interface TokenStat {
  label: string;
  value: string;
  /** A qualifier shown under the value, e.g. that a price is approximate. */
  note?: string;
}

export interface TokenAllocation {
  label: string;
  percent: number;
  description: string;
}

export interface FundingStep {
  icon: CtznIcon;
  title: string;
  description: string;
}

// ------------------------------------------------------------------- Legal

export interface LegalSection {
  id: string;
  title: string;
  paragraphs: string[];
  list?: string[];
  /** A paragraph shown after the list. */
  after?: string;
}

export interface LegalDocument {
  title: string;
  lead: string;
  sections: LegalSection[];
  contactTitle: string;
  contactText: string;
}

// ----------------------------------------------------------------- Pricing

/** One line of a plan card, with the short explanation its info tooltip shows. */
export interface PlanItem {
  label: string;
  detail: string;
}

export interface PricingPlan {
  /** Shown on the card; also what a Stripe product name must contain. */
  name: string;
  description: string;
  icon: PricingIcon;
  features: PlanItem[];
  limitations: PlanItem[];
  /** Shows the "Most Popular" badge. */
  popular: boolean;
  /** Matched against a price's product.metadata.planName. */
  productName: string;
}

/** The free option under the hosted plans. */
export interface SelfHostedOption {
  name: string;
  price: string;
  description: string;
  icon: PricingIcon;
  features: string[];
  linkLabel: string;
}

/** The toggle on the page; Stripe calls the same thing an interval. */
export type Billing = "monthly" | "yearly";

/** The Stripe intervals the toggle shows prices for, in the words of the
 *  server's price data (PriceRecord["interval"] in client/lib/types.ts,
 *  which has more): tsc checks the client code that matches one to the
 *  other (client/features/pricing/prices.ts). */
export type BillingInterval = "month" | "year";

// ---------------------------------------------------------------- Products

/** An icon, a title and a line of text, on one of the product pages. */
export interface IconItem<I extends NfcIcon | MobileIcon | DiscordIcon> {
  icon: I;
  title: string;
  description: string;
}

/** A group of benefits for one kind of user (NFC Wallet page). */
export interface Audience {
  id: string;
  icon: NfcIcon;
  title: string;
  intro: string;
  benefits: string[];
}

export interface FeatureList {
  title: string;
  items: string[];
}

export interface ChatMessage {
  author: string;
  bot: boolean;
  /** The slash command the user typed (shown as code), if any. */
  command?: string;
  text?: string;
  /** Lines of the bot's answer card. */
  card?: { title: string; lines: string[] };
}

// ---------------------------------------------------------------- Services

export interface Service {
  icon: ServicesIcon;
  title: string;
  description: string;
  features: string[];
  /** As shown, e.g. "From $5,000". */
  price: string;
  /** As shown, e.g. "2-4 weeks". */
  timeline: string;
}

export interface ServicePackage {
  name: string;
  price: string;
  description: string;
  features: string[];
  popular: boolean;
  buttonText: string;
}

// ----------------------------------------------------------------- Wallets

export type Platform = "iOS" | "Android" | "Web" | "NFC" | "Discord";

/** Where a product card's button goes: a page of this site, or an outside
 *  web app opened in a new tab. */
export type ProductLink = { kind: "internal"; to: string } | { kind: "external"; href: string };

export interface WalletProduct {
  name: string;
  description: string;
  /** An illustration shown at the top of the card (480x240, an SVG from content/images/wallets/). */
  image: { src: string; alt: string };
  icon: WalletsIcon;
  platforms: Platform[];
  features: string[];
  /** Download or activation count as shown, e.g. "10K+". */
  downloads: string;
  status: Status;
  buttonText: string;
  link: ProductLink;
}

/** A text field of the contact form: its name is a field of the form the
 *  server reads (IntroForm), the rest is how it shows. */
export interface ContactField {
  name: string;
  label: string;
  type: "text" | "email" | "url" | "textarea";
  required: boolean;
  placeholder: string;
  autoComplete?: string;
}
