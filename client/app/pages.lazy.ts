import { lazyRegistry, type PageImporters } from "./registry";

/** Each page is its own chunk; esbuild splits on these dynamic imports. The
 *  type checker holds each module to its page's data (PageImporters): a page
 *  missing here, or a page whose props do not take its loader's data, does
 *  not compile. */
const importers: PageImporters = {
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
};

export const registry = lazyRegistry(importers);
