import { eagerRegistry } from "../client/app/registry";
import * as Home from "../client/pages/Home";
import * as Wallets from "../client/pages/Wallets";
import * as Services from "../client/pages/Services";
import * as About from "../client/pages/About";
import * as Community from "../client/pages/Community";
import * as Blog from "../client/pages/Blog";
import * as NfcWallet from "../client/pages/NfcWallet";
import * as MobileApp from "../client/pages/MobileApp";
import * as DiscordWallet from "../client/pages/DiscordWallet";
import * as Pricing from "../client/pages/Pricing";
import * as Contact from "../client/pages/Contact";
import * as Ctzn from "../client/pages/Ctzn";
import * as Privacy from "../client/pages/Privacy";
import * as Terms from "../client/pages/Terms";
import * as Success from "../client/pages/Success";
import * as Cancel from "../client/pages/Cancel";
import * as NotFound from "../client/pages/NotFound";

/** renderToString is synchronous, so the server bundle holds every page.
 *  eagerRegistry takes PageModules: each module is checked against its
 *  page's data, and every page must be here. */
export const registry = eagerRegistry({
  Home, Wallets, Services, About, Community, Blog, NfcWallet, MobileApp, DiscordWallet,
  Pricing, Contact, Ctzn, Privacy, Terms, Success, Cancel, NotFound,
});
