import type { PageId, PageModule } from "../lib/types";
import { lazyRegistry } from "./registry";

type Importer = () => Promise<PageModule>;
const page = (load: () => Promise<unknown>): Importer => load as Importer;

/** Each page is its own chunk; esbuild splits on these dynamic imports. */
export const registry = lazyRegistry({
  Home: page(() => import("../pages/Home")),
  Wallets: page(() => import("../pages/Wallets")),
  Services: page(() => import("../pages/Services")),
  About: page(() => import("../pages/About")),
  Community: page(() => import("../pages/Community")),
  Blog: page(() => import("../pages/Blog")),
  NfcWallet: page(() => import("../pages/NfcWallet")),
  MobileApp: page(() => import("../pages/MobileApp")),
  DiscordWallet: page(() => import("../pages/DiscordWallet")),
  Pricing: page(() => import("../pages/Pricing")),
  Contact: page(() => import("../pages/Contact")),
  Ctzn: page(() => import("../pages/Ctzn")),
  Privacy: page(() => import("../pages/Privacy")),
  Terms: page(() => import("../pages/Terms")),
  Success: page(() => import("../pages/Success")),
  Cancel: page(() => import("../pages/Cancel")),
  NotFound: page(() => import("../pages/NotFound")),
} satisfies Record<PageId, Importer>);
