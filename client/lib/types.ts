// Shapes shared by the server bundle, the client and every page. The Rust
// loaders (server/routes/loaders.rs) produce `RouteData`; keep the two in step.

/** Every screen of the site; the Rust route table names one per URL. */
export type PageId =
  | "Home" | "Wallets" | "Services" | "About" | "Community" | "Blog"
  | "NfcWallet" | "MobileApp" | "DiscordWallet" | "Pricing" | "Contact"
  | "Ctzn" | "Privacy" | "Terms" | "Success" | "Cancel" | "NotFound";

/** What a route's Rust loader returns: embedded in the SSR page and served by
 *  the data endpoint for client-side navigation. */
export interface RouteData<D = unknown> {
  page: PageId;
  status: number;
  data: D;
}

/** A page either has its loader data, is waiting for it (client navigation),
 *  or gave up after the retries. */
export type LoadState = "ready" | "loading" | "error";

export interface PageProps<D = unknown> {
  data: D | undefined;
  state: LoadState;
}

export interface PageMeta {
  title: string;
  description: string;
}

export interface PageModule<D = unknown> {
  default: (props: PageProps<D>) => React.ReactNode;
  meta: (data: D | undefined) => PageMeta;
}

/** The payload of the `__ssr_render` call and of the bootstrap script tag. */
export interface Bootstrap extends RouteData {
  /** Set when the server rendered the error screen instead of the page. */
  error?: { status: number; message: string };
}

export interface RenderResult {
  status: number;
  /** The page's own title and description; the server builds the head. */
  title: string;
  description: string;
  html: string;
  page: PageId;
}

// ---- Loader data per page (server/routes/loaders.rs produces these) ----

/** /wallets: the Featured Communities (already filtered and ordered). */
export interface WalletsData {
  communities: FeaturedCommunity[];
}
export interface FeaturedCommunity {
  alias: string;
  name: string;
  description: string;
  /** URL of the logo image (hashed, under /assets/images/). */
  logo: string;
  /** The primary token's symbol. */
  symbol: string;
  url: string;
}

/** /about: rows of team_members, ordered by name; missing values are "". */
export interface AboutData {
  team: TeamMember[];
}
export interface TeamMember {
  name: string;
  role: string;
  bio: string;
  linkedin: string;
  x_profile: string;
  /** A photo when it starts with http, otherwise text or an emoji. */
  image_url: string;
}

/** /blog and /blog/:postId */
export interface BlogData {
  /** Every post, newest first (the filter is applied by the page). */
  posts: PostSummary[];
  /** The post for /blog/:postId when it exists, else null (the list shows). */
  post: Post | null;
  /** The `?type=` filter, or null for All. */
  type: string | null;
}
export interface PostSummary {
  id: string;
  title: string;
  /** ISO date, e.g. 2024-03-15. */
  date: string;
  author: string;
  type: string;
  readTime: string;
  excerpt: string;
  /** Image URL, or null when the post has none (a placeholder shows). */
  image: string | null;
  /** Set on drafts, which only the dev server lists. */
  draft?: true;
}
export interface Post extends PostSummary {
  /** Sanitized HTML rendered from the post's Markdown. */
  html: string;
}

/** /terms */
export interface TermsData {
  /** Today's date (UTC), ISO. */
  today: string;
}

/** /pricing (prices come from Stripe; see issue 4). */
export interface PricingData {
  /** Active prices; empty when Stripe is off. */
  prices: PriceRecord[];
  /** True when Stripe could not be reached. */
  error: boolean;
}
export interface PriceRecord {
  id: string;
  /** In the currency's minor unit (cents; whole yen). */
  amount: number;
  /** Lower-case ISO code, as Stripe sends it: "eur", "usd". */
  currency: string;
  interval: "month" | "year";
  product: { name: string; metadata: { planName?: string } };
}

/** /success?session_id=... */
export interface SuccessData {
  sessionId: string | null;
  /** paid: paid or nothing to pay; processing: checkout complete, a delayed
   *  payment (SEPA) still being confirmed; failed: no session id, no such
   *  session, open or expired, refused, or not verifiable now. */
  state: PaymentState;
  /** The session, when paid or processing. */
  session: VerifiedSession | null;
  /** Failed: the line under the heading. */
  error: string | null;
  /** Failed because this visitor checked too often: seconds to wait. */
  retryAfter: number | null;
}
export type PaymentState = "paid" | "processing" | "failed";
export interface VerifiedSession {
  customer_email: string | null;
  /** In the currency's minor unit. */
  amount_total: number;
  currency: string;
  payment_status: string;
  /** open, complete or expired. */
  status: string | null;
}
