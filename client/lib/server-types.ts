// Generated from the Rust types of server/contract.rs by ts-rs: do not edit.
// `cargo test --lib write_server_types -- --ignored` rewrites this file; a
// test fails while it differs from what the Rust types say.

import type { PageId } from "./page-ids";

/**
 * Every page of the site: those `content/routes.json` names, and `NotFound`
 * (client/lib/page-ids.ts, which client/build.mjs makes from the table).
 */
export type { PageId };

/**
 * The pages whose loader gives data, each with its data's type.
 */
export type DataPages = { "Wallets": WalletsData, "About": AboutData, "Blog": BlogData, "Pricing": PricingData, "Contact": ContactData, "Terms": TermsData, "Success": SuccessData };

/**
 * Each page with the data its loader gives it (the `data` type the table
 * names); a page without data carries only its name.
 */
export type PageData = { [K in keyof DataPages]: { "page": K, "data": DataPages[K] } }[keyof DataPages] | { "page": Exclude<PageId, keyof DataPages> };

/**
 * A route's loader result: its status and its page's data. Embedded in the
 * server-rendered page and served by `/api/route-data` for client-side
 * navigation.
 */
export type RouteData = { status: number, } & PageData;

/**
 * The JSON in the page's bootstrap tag, and the second argument of
 * `__ssr_render`: the route data, and the error screen's status when the
 * page's render threw (the client then shows that screen too).
 */
export type Bootstrap = { error?: ErrorNotice, status: number, } & PageData;

/**
 * What a visitor is told when a page breaks: a status and its reason,
 * never the exception's own text (that goes to the log).
 */
export type ErrorNotice = { status: number, message: string, };

/**
 * What `__ssr_render(url, bootstrapJson)` returns.
 */
export type RenderOutput = { status: number, 
/**
 * The page's title and meta description (plain text).
 */
title: string, description: string, 
/**
 * The body markup that hydrates.
 */
html: string, 
/**
 * The page that was rendered.
 */
page: PageId, 
/**
 * Set when the React render threw and the error screen was rendered.
 */
error?: string, 
/**
 * The stack trace of that error, positions in the server bundle.
 */
stack?: string, 
/**
 * The image the page paints first (a `<Picture priority>`), which
 * its head preloads.
 */
preload?: ImagePreload, };

/**
 * A page's first image as its head preloads it, before any script runs:
 * a photo's best format (its `srcset`, the layout's `sizes` and its
 * type), or an SVG's URL.
 */
export type ImagePreload = { href: string, imagesrcset?: string, imagesizes?: string, type?: string, };

/**
 * An image of `content/images/` as the build made it, what `<Picture>`
 * (client/components/Picture.tsx) draws: an SVG as it is, or a raster
 * image's variants, upright and without metadata, in AVIF, WebP and its
 * own format at the widths the layouts show.
 */
export type SiteImage = { 
/**
 * The URL an `<img src>` names: the SVG, or the largest variant in the
 * image's own format.
 */
src: string, 
/**
 * Its true size in pixels (a photo's after its EXIF orientation).
 */
width: number, height: number, 
/**
 * A raster image's variants by format, best first (AVIF, WebP), its
 * own format last; each a `srcset` of its widths. None for an SVG.
 */
sources?: Array<ImageSource>, 
/**
 * An opaque raster image's placeholder: the stylesheet class that
 * paints its blurred preview behind it while it loads.
 */
placeholder?: string, };

/**
 * One format of a raster image: its MIME type and its `srcset`.
 */
export type ImageSource = { type: string, srcset: string, };

/**
 * /wallets: the Featured Communities, already filtered and ordered.
 */
export type WalletsData = { communities: Array<FeaturedCommunity>, };

/**
 * A card on /wallets.
 */
export type FeaturedCommunity = { alias: string, name: string, description: string, 
/**
 * The logo as the build made it (an SVG, or a picture's variants).
 */
logo: SiteImage, symbol: string, url: string, };

/**
 * /about: the team as last read (empty while the database fails).
 */
export type AboutData = { team: Array<TeamMember>, };

/**
 * One row of `team_members` as /about receives it: missing values are
 * empty strings. `image_url` is a photo when it starts with http, otherwise
 * text or an emoji.
 */
export type TeamMember = { name: string, role: string, bio: string, linkedin: string, x_profile: string, image_url: string, };

/**
 * /blog and /blog/:postId.
 */
export type BlogData = { 
/**
 * Every post, newest first (the page applies the filter).
 */
posts: Array<PostSummary>, 
/**
 * The post of /blog/:postId when it exists; otherwise the list shows.
 */
post: Post | null, 
/**
 * The `?type=` filter, or null for All.
 */
type: string | null, };

/**
 * What a list card shows.
 */
export type PostSummary = { id: string, title: string, 
/**
 * When it is published, as the front matter gives it: a day
 * (`YYYY-MM-DD`, its start in UTC), or a date and time with its offset
 * (RFC 3339: `2026-12-01T09:00:00+01:00`, `Z` for UTC).
 */
date: string, 
/**
 * The last revision, in the same forms: the front matter's `updated`,
 * else `date`.
 */
updated: string, author: string, 
/**
 * The author's page, if the front matter names one: a path on this
 * site (starting with `/`) or an https URL.
 */
authorUrl?: string, type: string, readTime: string, excerpt: string, 
/**
 * The cover, as the build made it, or null when the post has none
 * (the page shows a placeholder).
 */
image: SiteImage | null, 
/**
 * Set only on drafts, which only the dev server lists; the page marks them.
 */
draft?: boolean, 
/**
 * Set only on posts whose time (`date`) has not come, which only the
 * dev server lists; the page marks them with their time.
 */
scheduled?: boolean, };

/**
 * A whole post.
 */
export type Post = { 
/**
 * Sanitized HTML of the Markdown body. An image of `content/images/`
 * named by a path relative to the post is an `<img>` whose `src` is
 * one of `images`: the page draws it as it draws the cover.
 */
html: string, 
/**
 * The images of `content/images/` the body shows, each once.
 */
images: Array<SiteImage>, id: string, title: string, 
/**
 * When it is published, as the front matter gives it: a day
 * (`YYYY-MM-DD`, its start in UTC), or a date and time with its offset
 * (RFC 3339: `2026-12-01T09:00:00+01:00`, `Z` for UTC).
 */
date: string, 
/**
 * The last revision, in the same forms: the front matter's `updated`,
 * else `date`.
 */
updated: string, author: string, 
/**
 * The author's page, if the front matter names one: a path on this
 * site (starting with `/`) or an https URL.
 */
authorUrl?: string, type: string, readTime: string, excerpt: string, 
/**
 * The cover, as the build made it, or null when the post has none
 * (the page shows a placeholder).
 */
image: SiteImage | null, 
/**
 * Set only on drafts, which only the dev server lists; the page marks them.
 */
draft?: boolean, 
/**
 * Set only on posts whose time (`date`) has not come, which only the
 * dev server lists; the page marks them with their time.
 */
scheduled?: boolean, };

/**
 * /pricing: Stripe's active prices.
 */
export type PricingData = { 
/**
 * Empty when Stripe is off or could not be read.
 */
prices: Array<PriceRecord>, 
/**
 * True when Stripe could not be reached.
 */
error: boolean, };

/**
 * An active recurring price, with its product.
 */
export type PriceRecord = { id: string, 
/**
 * `unit_amount`, in the currency's minor unit (cents; see [`minor_unit_digits`]).
 */
amount: number, 
/**
 * Lower-case ISO code as Stripe sends it, e.g. "eur".
 */
currency: string, interval: PriceInterval, product: ProductInfo, };

/**
 * How often a recurring price is billed (`recurring.interval`).
 */
export type PriceInterval = "day" | "week" | "month" | "year";

/**
 * A price's product, as far as the pricing page reads it.
 */
export type ProductInfo = { name: string, metadata: ProductMetadata, };

export type ProductMetadata = { 
/**
 * `product.metadata["planName"]`: the plan this product is, when its
 * name alone does not say.
 */
planName?: string, };

/**
 * /contact, and the page a form post without JavaScript gets back.
 */
export type ContactData = { 
/**
 * `?submitted=1`: the form was stored.
 */
submitted: boolean, 
/**
 * Why a form post was refused.
 */
error: string | null, 
/**
 * What that refused post held, to fill the form in again.
 */
values: IntroForm | null, 
/**
 * The fields of that post to fix, each marked with what to do.
 */
fields: Array<FieldError>, };

/**
 * What the form sends, as sent (JSON from the script, or form fields).
 */
export type IntroForm = { name: string, contactPerson: string, email: string, website: string, description: string, tags: Array<string>, 
/**
 * A UUID the page makes for each submission, so a retry after a lost
 * answer is stored once. Optional: a plain form post has none.
 */
submissionId: string, 
/**
 * The honeypot: a field people never see or fill; bots do.
 */
fax?: string, };

/**
 * A form field the visitor must fix: its name (IntroForm's, which the
 * form's inputs carry) and what to do, shown at the field.
 */
export type FieldError = { field: string, message: string, };

/**
 * /terms.
 */
export type TermsData = { 
/**
 * Today's date (UTC), `YYYY-MM-DD`.
 */
today: string, };

/**
 * /success?session_id=...
 */
export type SuccessData = { sessionId: string | null, state: PaymentState, 
/**
 * The session, when paid or processing.
 */
session: VerifiedSession | null, 
/**
 * Failed: the line under the heading.
 */
error: string | null, 
/**
 * Failed because this visitor checked too often: seconds to wait.
 */
retryAfter: number | null, };

/**
 * Where a checkout stands, as the success page tells it.
 */
export type PaymentState = "paid" | "processing" | "failed";

/**
 * A Checkout Session, as the success page shows it.
 */
export type VerifiedSession = { 
/**
 * `customer_details.email`, falling back to `customer_email`.
 */
customer_email: string | null, 
/**
 * In the currency's minor unit.
 */
amount_total: number, 
/**
 * Lower-case ISO code as Stripe sends it, e.g. "usd".
 */
currency: string, 
/**
 * "paid" | "unpaid" | "no_payment_required" (or any new value Stripe adds).
 */
payment_status: string, 
/**
 * The session's own state: "open" | "complete" | "expired".
 */
status: string | null, };

/**
 * The JSON body of `POST /api/create-checkout-session` (a plain form post
 * sends the same field).
 */
export type CheckoutRequest = { priceId: string, };

/**
 * `POST /api/create-checkout-session` with JSON: where Stripe Checkout
 * takes the visitor.
 */
export type CheckoutCreated = { url: string, };

/**
 * `POST /api/save-to-notion` with JSON: the request is stored.
 */
export type IntroStored = { success: true, };

/**
 * Every API failure: the message the visitor is shown (which field, why).
 */
export type ApiFailure = { success: false, error: string, 
/**
 * A refused form: each field to fix, with what to do.
 */
fields?: Array<FieldError>, };
