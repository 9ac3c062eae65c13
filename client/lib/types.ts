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
  head: string;
  html: string;
  page: PageId;
}
