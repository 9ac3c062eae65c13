import embeds from "./embeds.json";

// External addresses the site links to, in one place. Every one of them opens
// in a new tab (use <ExternalLink>). The pages embedded in frames live in
// embeds.json: the server's Content-Security-Policy allows exactly those.
export const LINKS = {
  appStore: "https://apps.apple.com/app/citizen-wallet/id6460822891",
  googlePlay: "https://play.google.com/store/apps/details?id=xyz.citizenwallet.wallet",
  webWallet: "https://app.citizenwallet.xyz",
  bookCall: "https://cal.com/citizenwallet/intro",
  discord: "https://discord.gg/citizenwallet",
  twitter: "https://x.com/citizenwallet",
  github: "https://github.com/citizenwallet",
  selfHostRepo: "https://github.com/citizenwallet/app",
  dashboard: "https://dashboard.citizenwallet.xyz",
  dex: "https://app.uniswap.org/swap?chain=base&outputCurrency=0x0D9B0790E97e3426C161580dF4Ee853E4A7C4607",
  priceChart: embeds.priceChart,
  nfcVideo: embeds.nfcVideo,
  contactEmail: "hello@citizenwallet.xyz",
} as const;
