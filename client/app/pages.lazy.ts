import type { PageId, PageModule } from "../lib/types";
import { lazyRegistry } from "./registry";

type Importer = () => Promise<PageModule>;

/** Each page is its own chunk; esbuild splits on these dynamic imports. The
 *  modules are read as PageModule by one cast below, not by a wrapper per
 *  page: a wrapper would ship in the entry chunk every page loads. */
const importers = {
  Home: () => import("../pages/Home"),
  Wallets: () => import("../pages/Wallets"),
  Services: () => import("../pages/Services"),
  About: () => import("../pages/About"),
  Community: () => import("../pages/Community"),
  Blog: () => import("../pages/Blog"),
  NfcWallet: () => import("../pages/NfcWallet"),
  MobileApp: () => import("../pages/MobileApp"),
  DiscordWallet: () => import("../pages/DiscordWallet"),
  Pricing: () => import("../pages/Pricing"),
  Contact: () => import("../pages/Contact"),
  Ctzn: () => import("../pages/Ctzn"),
  Privacy: () => import("../pages/Privacy"),
  Terms: () => import("../pages/Terms"),
  Success: () => import("../pages/Success"),
  Cancel: () => import("../pages/Cancel"),
  NotFound: () => import("../pages/NotFound"),
} satisfies Record<PageId, () => Promise<unknown>>;

export const registry = lazyRegistry(importers as Record<PageId, () => Promise<unknown>> as Record<PageId, Importer>);
