// Shapes shared by the server bundle, the client and every page. What the
// server sends is described only by ./server-types.ts, generated from the Rust
// types of server/contract.rs; this file re-exports it and adds the client's
// own shapes.
import type { DataPages, PageData, PageId } from "./server-types";

export type {
  AboutData,
  ApiFailure,
  CheckoutCreated,
  CheckoutRequest,
  IntroStored,
  BlogData,
  Bootstrap,
  ContactData,
  ErrorNotice,
  FeaturedCommunity,
  FieldError,
  ImagePreload,
  ImageSource,
  IntroForm,
  PageData,
  PageId,
  PaymentState,
  Post,
  PostSummary,
  PriceInterval,
  PriceRecord,
  PricingData,
  RenderOutput,
  RouteData,
  SiteImage,
  SuccessData,
  TeamMember,
  TermsData,
  VerifiedSession,
  WalletsData,
} from "./server-types";

/** The loader data of page `K` (undefined for a page without a loader). */
export type DataOf<K extends PageId> = K extends keyof DataPages ? DataPages[K] : undefined;

/** Every page with its data type. */
export type PageDataMap = { [K in PageId]: DataOf<K> };

/** The pages the Rust loaders give data for are page ids of the table
 *  (client/lib/page-ids.ts): this line stops compiling if one is not. */
export type PagesHaveData = Assert<Same<PageData["page"], PageId>>;
/** Type-level checks: `Assert<Same<A, B>>` compiles only when A and B are
 *  the same type. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Assert<T extends true> = T;

/** A page either has its loader data, is waiting for it (client navigation),
 *  or gave up after the retries. */
export type LoadState = "ready" | "loading" | "error";

export interface PageProps<D = undefined> {
  data: D | undefined;
  state: LoadState;
}

export interface PageMeta {
  title: string;
  description: string;
}

/** A page's module: its component and its head text, both typed by the data
 *  its loader sends. */
export interface PageModule<D> {
  default: (props: PageProps<D>) => React.ReactNode;
  meta: (data: D | undefined) => PageMeta;
  /** What a new view of the page shows (the same path, another query: a
   *  filter, a toggle), said to a screen reader; the title when absent. */
  view?: (data: D | undefined, search: URLSearchParams) => string;
}

/** Every page's module, each checked against its own data type. */
export type PageModules = { [K in PageId]: PageModule<PageDataMap[K]> };
