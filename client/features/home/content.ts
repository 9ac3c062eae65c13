// Home page content (spec section 1): features, use cases, supported chains
// and payment options. Class names stay in the components (Tailwind scans
// client/ only); data carries plain values such as gradient colours.
import baseLogo from "../../../content/images/chains/base.svg";
import celoLogo from "../../../content/images/chains/celo.svg";
import ethereumLogo from "../../../content/images/chains/ethereum.svg";
import gnosisLogo from "../../../content/images/chains/gnosis.svg";
import polygonLogo from "../../../content/images/chains/polygon.svg";
import type { Chain, Feature, PaymentOption, UseCase } from "../../../content/site/types";

export const LAUNCH_BANNER = {
  text: "Brussels Pay is live — the city payment programme launches",
  /** The launch announcement on the blog. */
  to: "/blog/brussels-pay-launch",
} as const;

export const HERO = {
  title: "The wallet for your community currency",
  description:
    "Citizen Wallet lets neighbours, merchants and organisers pay each other in the currency their community runs — no gas fees, no seed phrases, no sign-up forms. Open the app, scan, pay.",
} as const;

export const FEATURES: Feature[] = [
  {
    icon: "Send",
    title: "Simple Transactions",
    description: "Send and receive ERC20 community tokens in a couple of taps. No account to create and no gas fees to pay.",
    status: "Live",
    category: "Core",
  },
  {
    icon: "Ticket",
    title: "Voucher System",
    description: "Hand out printed or digital vouchers. Scanning one creates a web wallet on the spot, already funded.",
    status: "Live",
    category: "Physical",
  },
  {
    icon: "Globe",
    title: "Web Burner Wallet",
    description: "A wallet that lives in the browser: its key is generated on the device and kept in the URL hash, nothing to install.",
    status: "Live",
    category: "Core",
  },
  {
    icon: "Cloud",
    title: "Simple Backup",
    description: "The recovery phrase is saved to your own cloud drive automatically, so changing phones never means losing funds.",
    status: "Live",
    category: "Core",
  },
  {
    icon: "Nfc",
    title: "NFC Wallets",
    description: "Cards, wristbands and stickers that hold a balance. Tap to pay at events and markets, no phone needed.",
    status: "Live",
    category: "Physical",
  },
  {
    icon: "Store",
    title: "Point of Sale",
    description: "Merchants accept payments from cards, vouchers and NFC badges with nothing more than a phone at the counter.",
    status: "Live",
    category: "Business",
  },
  {
    icon: "Link2",
    title: "Payment Requests",
    description: "Create a request for an amount and share it as a link. Whoever opens it can pay in one step.",
    status: "Live",
    category: "Business",
  },
  {
    icon: "Coins",
    title: "Multi-Currency",
    description: "Belong to several communities at once and keep each of their currencies side by side in one app.",
    status: "Live",
    category: "Core",
  },
  {
    icon: "Network",
    title: "Cross-Chain Support",
    description: "Communities pick the network that suits them; the wallet handles Ethereum-compatible chains the same way.",
    status: "Live",
    category: "Technical",
  },
];

export const USE_CASES: UseCase[] = [
  {
    icon: "MapPin",
    title: "Local Currency",
    description: "Keep value circulating in your town: residents spend with local shops, and shops pay local suppliers.",
    gradient: { from: "#2563eb", to: "#06b6d4" },
  },
  {
    icon: "Handshake",
    title: "Mutual Credit Systems",
    description: "Members extend credit to each other and settle in the community's own unit, with balances everyone can check.",
    gradient: { from: "#059669", to: "#14b8a6" },
  },
  {
    icon: "ArrowLeftRight",
    title: "Alternative Payment Network",
    description: "Give a cooperative or association its own payment rail, independent of card networks and their fees.",
    gradient: { from: "#7c3aed", to: "#6366f1" },
  },
  {
    icon: "CalendarDays",
    title: "Event Tokens",
    description: "Festivals and conferences sell tokens at the gate; visitors tap cards at the bar and get the rest back later.",
    gradient: { from: "#db2777", to: "#f43f5e" },
  },
  {
    icon: "Gift",
    title: "Loyalty Programs",
    description: "Reward regular customers with points that work across every participating shop in the neighbourhood.",
    gradient: { from: "#d97706", to: "#ea580c" },
  },
  {
    icon: "Trophy",
    title: "Reward Mechanisms",
    description: "Recognise volunteering, contributions and civic participation with tokens people can actually spend.",
    gradient: { from: "#0d9488", to: "#65a30d" },
  },
];

export const CHAINS: Chain[] = [
  { name: "Ethereum", logo: ethereumLogo },
  { name: "Polygon", logo: polygonLogo },
  { name: "Celo", logo: celoLogo },
  { name: "Base", logo: baseLogo },
  { name: "Gnosis", logo: gnosisLogo },
];

export const PAYMENT_OPTIONS: PaymentOption[] = [
  {
    icon: "Ticket",
    title: "Physical Vouchers",
    description: "Printed vouchers with a code that turns into a wallet when scanned.",
  },
  {
    icon: "ContactRound",
    title: "Contact Directory",
    description: "Pick a name from your community's directory instead of copying an address.",
  },
  {
    icon: "Nfc",
    title: "NFC Tags and Cards",
    description: "Tap a card, badge or sticker against a phone to pay or get paid.",
  },
  {
    icon: "QrCode",
    title: "QR Codes",
    description: "Show or scan a code at the till; the amount and recipient fill in by themselves.",
  },
];

export const WHY = {
  title: "Why yet another crypto wallet?",
  paragraphs: [
    "Most crypto wallets are built for traders. They ask newcomers to buy gas, write down twelve words and understand networks before a single payment goes through. That is where community currencies lose people.",
    "Citizen Wallet hides gas fees and seed phrases entirely. Simple use, smooth onboarding and a currency everyone can reach — whether they carry a smartphone, a browser link or just a card in their pocket.",
  ],
} as const;

export const CTA = {
  title: "Want your own wallet for your community token?",
  text: "Tell us about your community and we will show you how to launch a branded wallet, vouchers and cards in a few weeks.",
} as const;
