import accounts from "./accounts.json";
import embeds from "./embeds.json";

// External addresses the site links to, in one place. Every one of them opens
// in a new tab (use <ExternalLink>). The pages embedded in frames live in
// embeds.json: the server's Content-Security-Policy allows exactly those.
// The site's own accounts elsewhere live in accounts.json: the server names
// them too, as the Organization's `sameAs` in every page's JSON-LD and (the
// X account) as the share cards' `twitter:site`.
export const LINKS = {
  appStore: "https://apps.apple.com/app/citizen-wallet/id6460822891",
  googlePlay: "https://play.google.com/store/apps/details?id=xyz.citizenwallet.wallet",
  webWallet: "https://app.citizenwallet.xyz",
  bookCall: "https://cal.com/citizenwallet/intro",
  discord: accounts.discord,
  twitter: accounts.twitter,
  github: accounts.github,
  selfHostRepo: "https://github.com/citizenwallet/app",
  dashboard: "https://dashboard.citizenwallet.xyz",
  dex: "https://app.uniswap.org/swap?chain=base&outputCurrency=0x0D9B0790E97e3426C161580dF4Ee853E4A7C4607",
  priceChart: embeds.priceChart,
  nfcVideo: embeds.nfcVideo,
  contactEmail: "hello@citizenwallet.xyz",
} as const;
