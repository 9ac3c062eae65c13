// Wallets page content (spec sections 2 and 9): the four wallet products.
// The Featured Communities come from the route loader, not from here.
import discordWallet from "../../../content/images/wallets/discord-wallet.svg";
import mobileWallet from "../../../content/images/wallets/mobile-wallet.svg";
import nfcWallet from "../../../content/images/wallets/nfc-wallet.svg";
import webBurnerWallet from "../../../content/images/wallets/web-burner-wallet.svg";
import { LINKS } from "../../../content/site/links";
import type { WalletProduct } from "../../../content/site/types";

export const WALLETS_INTRO = {
  title: "Our Wallets",
  lead: "One community currency, four ways to carry it: a mobile app, a wallet that opens in any browser, contactless cards and a bot inside Discord.",
} as const;

export const WALLET_PRODUCTS: WalletProduct[] = [
  {
    name: "Mobile Wallet",
    description: "The full Citizen Wallet app for iOS and Android: pay, request, scan vouchers and switch between communities.",
    image: { src: mobileWallet, alt: "A phone showing a token balance with send and receive buttons" },
    icon: "Smartphone",
    platforms: ["iOS", "Android"],
    features: ["No gas fees or seed phrases", "Automatic cloud backup", "QR code and contact payments", "Several communities in one app"],
    downloads: "10K+",
    status: "Live",
    buttonText: "Learn More",
    link: { kind: "internal", to: "/mobile-app" },
  },
  {
    name: "Web Burner Wallet",
    description: "A wallet created in the browser in a second. Perfect for first-time users, events and voucher campaigns.",
    image: { src: webBurnerWallet, alt: "A browser window with a wallet balance next to a QR code voucher" },
    icon: "Globe",
    platforms: ["Web"],
    features: ["Nothing to install", "Key generated on the device", "Created by scanning a voucher", "Works on any phone or laptop"],
    downloads: "50K+",
    status: "Live",
    buttonText: "Open Web Wallet",
    link: { kind: "external", href: LINKS.webWallet },
  },
  {
    name: "NFC Wallet",
    description: "Contactless cards and wristbands that hold a balance, for people who would rather not use a phone to pay.",
    image: { src: nfcWallet, alt: "A contactless card tapped against a phone showing a completed payment" },
    icon: "Nfc",
    platforms: ["NFC"],
    features: ["Tap to pay at any point of sale", "Top up at the counter", "Ideal for events and markets", "Balance visible with a tap"],
    downloads: "5K+",
    status: "Live",
    buttonText: "Learn More",
    link: { kind: "internal", to: "/nfc-wallet" },
  },
  {
    name: "Discord Wallet",
    description: "Send and receive your community token without leaving the chat, with simple bot commands.",
    image: { src: discordWallet, alt: "A chat message in which a bot sends tokens to a member" },
    icon: "MessageSquare",
    platforms: ["Discord"],
    features: ["Send tokens with a command", "Check your balance in chat", "Reward members for contributions", "Set up in minutes"],
    downloads: "2K+",
    status: "Live",
    buttonText: "Learn More",
    link: { kind: "internal", to: "/discord-wallet" },
  },
];

export const FEATURED_COMMUNITIES = {
  title: "Featured Communities",
  lead: "Communities already running their currency on Citizen Wallet.",
  loading: "Loading communities...",
} as const;
