// The three product pages (spec section 2): NFC Wallet, Mobile App and
// Discord Wallet. Each page's lists, steps and sample content live here.
import type { Audience, ChatMessage, DiscordIcon, FeatureList, IconItem, MobileIcon, NfcIcon } from "./types";

// ---------------------------------------------------------------- NFC Wallet

export const NFC_AUDIENCES: Audience[] = [
  {
    id: "participants",
    icon: "Users",
    title: "For Participants",
    intro: "A card or wristband that just works, with no phone or app needed.",
    benefits: [
      "Pay with a tap at every stand",
      "No app, account or seed phrase to set up",
      "Top up with cash, card or vouchers on site",
      "Check your balance by tapping your card on a phone",
      "Keep the card as a souvenir or reuse it next time",
    ],
  },
  {
    id: "organisers",
    icon: "CalendarDays",
    title: "For Organisers",
    intro: "Run a closed-loop currency for your event or neighbourhood.",
    benefits: [
      "Issue cards in bulk and link them to your community token",
      "Follow every transaction live on a public dashboard",
      "Cut queues: payments take about a second",
      "Reward volunteers and participants in the same currency",
      "Money stays inside your community, not with card networks",
    ],
  },
  {
    id: "sales-points",
    icon: "Store",
    title: "For Sales Points",
    intro: "Accept payments with the phone you already have.",
    benefits: [
      "Turn a phone into a point of sale",
      "No terminal to rent and no card fees",
      "See each sale arrive instantly",
      "Accept NFC cards, QR codes and vouchers in one place",
      "Cash out your earnings to the organiser at the end of the day",
    ],
  },
];

export const NFC_STEPS: IconItem<NfcIcon>[] = [
  { icon: "CreditCard", title: "Hand out cards", description: "Each card holds its own wallet, linked to your community token." },
  { icon: "HandCoins", title: "Top up", description: "Participants load credit at a top-up point or receive it as a reward." },
  { icon: "Zap", title: "Tap to pay", description: "Vendors tap the card on their phone and the payment settles in seconds." },
];

export const NFC_TEXT = {
  lead: "Tap-to-pay cards and wristbands for festivals, markets and local shops. Your community currency in a card anyone can use.",
  audiencesTitle: "Built for Everyone at the Event",
  stepsTitle: "How It Works",
  videoTitle: "See It in Action",
  videoLead: "Watch how NFC payments run at a community event.",
  videoFrameTitle: "Citizen Wallet NFC payments at a community event (video)",
  dashboardLead: "Every payment is recorded on-chain. Follow them as they happen:",
  dashboardLink: "View live transactions dashboard",
  ctaTitle: "Bring Tap-to-Pay to Your Community",
  ctaText: "Tell us about your event or neighbourhood and we will help you plan cards, top-up points and vendors.",
  getStarted: "Get Started",
  contactSales: "Contact Sales",
  imageAlt: "An NFC card being tapped on a phone that shows a completed payment",
};

// ---------------------------------------------------------------- Mobile App

export const PAYMENT_OPTIONS: IconItem<MobileIcon>[] = [
  { icon: "Ticket", title: "Digital Vouchers", description: "Scan a voucher to receive tokens, or create one to hand out credit to someone without a wallet." },
  { icon: "QrCode", title: "QR Codes", description: "Show your code to get paid, or scan a shop's code to pay. Amounts and descriptions come filled in." },
  { icon: "Contact", title: "Contacts", description: "Pay the people you know by name from your contact list, instead of copying long addresses." },
];

export const MOBILE_FEATURE_LISTS: FeatureList[] = [
  {
    title: "Everyday Payments",
    items: [
      "Send and receive community tokens in seconds",
      "No gas fees: the community covers the network costs",
      "Payment requests shared as a simple link",
      "Transaction history with descriptions",
    ],
  },
  {
    title: "Made for Communities",
    items: [
      "Several community currencies in one app",
      "Community plugins such as top-ups and shops",
      "Works on Ethereum, Polygon, Celo, Base and Gnosis",
      "Your community's name, logo and colours",
    ],
  },
  {
    title: "Safe and Simple",
    items: [
      "No seed phrase to write down",
      "Backups to your own cloud drive",
      "Open-source code anyone can review",
      "Available on iOS and Android",
    ],
  },
];

export const MOBILE_HIGHLIGHTS: IconItem<MobileIcon>[] = [
  { icon: "ShieldCheck", title: "No seed phrases", description: "Your wallet is backed up to your cloud drive, so losing your phone does not mean losing your money." },
  { icon: "Layers", title: "Many currencies", description: "Join several communities and switch between their tokens in one tap." },
  { icon: "Globe", title: "Open source", description: "The app's code is public, so anyone can check how it handles your funds." },
];

export const MOBILE_TEXT = {
  lead: "The Citizen Wallet app puts your community currency in everyone's pocket. Free on iOS and Android.",
  downloadTitle: "Download the App",
  appStore: "Download on the App Store",
  googlePlay: "Get it on Google Play",
  paymentTitle: "Three Ways to Pay",
  paymentLead: "Whether someone has the app or not, there is a way to get them paid.",
  featuresTitle: "Everything Your Community Needs",
  highlightsTitle: "Why Members Like It",
  downloads: "10K+ downloads",
  ctaTitle: "Your Currency, in the App",
  ctaText: "Hosted plans from Community Standard upwards put your community token in the Citizen Wallet app, with your name and logo.",
  imageAlt: "The Citizen Wallet app on a phone showing a community token balance",
};

// ------------------------------------------------------------ Discord Wallet

export const DISCORD_CHAT: { channel: string; messages: ChatMessage[] } = {
  channel: "community-wallet",
  messages: [
    { author: "alex", bot: false, command: "/send @maya 10 CTZN" },
    {
      author: "Citizen Wallet",
      bot: true,
      card: { title: "Transfer complete", lines: ["alex sent 10 CTZN to @maya", "No fees, no waiting: it is in maya's wallet now."] },
    },
    { author: "maya", bot: false, command: "/balance" },
    {
      author: "Citizen Wallet",
      bot: true,
      card: { title: "Your balance", lines: ["@maya has 135 CTZN", "Wallet: 0x7a3…c91e"] },
    },
  ],
};

export const DISCORD_COMMANDS: { command: string; description: string }[] = [
  { command: "/send", description: "Send tokens to another member: /send @member amount token." },
  { command: "/balance", description: "See how many tokens you hold." },
];

export const DISCORD_USE_CASES: IconItem<DiscordIcon>[] = [
  { icon: "Trophy", title: "Reward Contributors", description: "Thank members for answers, artwork, code or moderation with tokens they can spend." },
  { icon: "PartyPopper", title: "Event Tickets", description: "Sell access to calls, workshops and meetups in your own currency." },
  { icon: "Gift", title: "Tipping", description: "Let members tip each other for help in a single command." },
  { icon: "Vote", title: "Community Decisions", description: "Use token balances to weigh votes or fund proposals." },
  { icon: "Wallet", title: "Shared Treasury", description: "Pay bounties and grants from a community wallet everyone can follow." },
  { icon: "BadgeCheck", title: "Membership Perks", description: "Unlock roles and channels for members who hold or earn tokens." },
];

export const DISCORD_BENEFITS: IconItem<DiscordIcon>[] = [
  { icon: "Zap", title: "Instant setup", description: "Add the bot to your server and your members have wallets right away." },
  { icon: "Lock", title: "No crypto know-how needed", description: "No seed phrases, no gas fees, no extensions: just slash commands." },
  { icon: "Smartphone", title: "Works beyond Discord", description: "The same tokens work in the mobile app and with NFC cards." },
  { icon: "Languages", title: "For any community", description: "Gaming, open source, local groups or DAOs: the currency is yours." },
];

export const DISCORD_TEXT = {
  lead: "Give your Discord server its own currency. Members send, receive and check tokens with simple slash commands.",
  chatTitle: "Payments in the Chat",
  chatLead: "Members pay each other and check what they hold without leaving the conversation.",
  chatLabel: "Sample conversation with the Citizen Wallet bot",
  commandsTitle: "Commands",
  useCasesTitle: "Use Cases",
  benefitsTitle: "Why a Discord Wallet",
  ctaTitle: "Ready to Add a Currency to Your Server?",
  ctaText: "Pick a plan or tell us about your community, and we will set up the bot and your token with you.",
  bookCall: "Book a Call",
  pricingLink: "See Pricing",
};
