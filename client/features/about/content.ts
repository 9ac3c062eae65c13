// About page content (spec section 2): mission, values, timeline, partners.
// The team comes from the team_members table through the route loader.
import type { Partner, TimelineEntry, Value } from "../../../content/site/types";

export const ABOUT_INTRO = {
  title: "About",
  lead: "We build open-source wallets so that any community — a neighbourhood, a city, a festival or a Discord server — can run its own currency without asking its members to become crypto experts.",
} as const;

export const MISSION = {
  title: "Our Mission",
  paragraphs: [
    "Money shapes how a community works together. Local currencies, mutual credit and community tokens let people keep value close to home and reward what matters to them, but the tools to run them have long been too technical for most.",
    "Our mission is to make a community currency as easy to use as cash: no gas fees, no seed phrases, no jargon. Anyone should be able to receive their first tokens in seconds, with a phone, a browser or a simple card.",
  ],
} as const;

export const VALUES: Value[] = [
  {
    icon: "Accessibility",
    title: "Accessibility First",
    description: "If someone can't use it on their first try, we have more work to do. We design for every phone, every age and people without a phone at all.",
  },
  {
    icon: "Users",
    title: "Community Driven",
    description: "Our roadmap comes from the communities on the ground. Organisers, merchants and members shape what we build next.",
  },
  {
    icon: "Eye",
    title: "Transparency",
    description: "Our code is open source and every transaction can be verified on-chain, so communities can trust the system they run.",
  },
  {
    icon: "Leaf",
    title: "Sustainability",
    description: "We favour efficient networks and long-lived infrastructure, and price our services so that the project can last.",
  },
];

export const TEAM = {
  title: "Meet Our Team",
  lead: "The people designing, building and supporting Citizen Wallet.",
  loading: "Loading team data...",
} as const;

export const TIMELINE: TimelineEntry[] = [
  {
    year: "2020",
    title: "Foundation",
    description: "A small group of builders and organisers set out to make community currencies usable by everyone.",
  },
  {
    year: "2021",
    title: "First Launch",
    description: "The first community wallet went live, with vouchers that turned into web wallets when scanned.",
  },
  {
    year: "2022",
    title: "Multi-chain Support",
    description: "Communities could choose their network, and one app learned to hold several currencies.",
  },
  {
    year: "2023",
    title: "NFC Integration",
    description: "Contactless cards and point-of-sale tools brought community payments to events and markets.",
  },
  {
    year: "2024",
    title: "Brussels Pay Launch",
    description: "Brussels Pay launched as a city payment programme built on Citizen Wallet.",
  },
];

export const PARTNERS_INTRO = {
  title: "Supported By",
  lead: "Organisations that fund, build alongside and champion community currencies with us.",
  contactPrompt: "Interested in supporting community currencies?",
  contactLabel: "Get in touch",
} as const;

/** Placeholder partners until the real list is confirmed. */
export const PARTNERS: Partner[] = [
  {
    name: "Open Commons Foundation",
    category: "Funding Partner",
    description: "Grants for open infrastructure that serves local economies.",
    url: "https://opencommons.foundation",
  },
  {
    name: "Metro Innovation Lab",
    category: "Strategic Partner",
    description: "Helps cities pilot new public payment programmes.",
    url: "https://metroinnovationlab.eu",
  },
  {
    name: "Neighbourhood Hubs Network",
    category: "Community Partner",
    description: "A network of community centres running local currency pilots.",
    url: "https://neighbourhoodhubs.org",
  },
  {
    name: "EVM Builders Collective",
    category: "Ecosystem Partner",
    description: "Developers maintaining shared tooling for Ethereum-compatible chains.",
    url: "https://evmbuilders.dev",
  },
  {
    name: "Regenerative Commons Fund",
    category: "Community Fund",
    description: "A member-governed fund backing regenerative community projects.",
    url: "https://regencommonsfund.org",
  },
  {
    name: "Tapline Payments",
    category: "Integration Partner",
    description: "NFC hardware and point-of-sale terminals for small merchants.",
    url: "https://tapline.io",
  },
  {
    name: "Public Goods Guild",
    category: "Public Goods Funding",
    description: "Recurring funding rounds for open-source public goods.",
    url: "https://publicgoodsguild.org",
  },
  {
    name: "Matching Round Accelerator",
    category: "Quadratic Accelerator",
    description: "Quadratic funding rounds that amplify small community donations.",
    url: "https://matchinground.xyz",
  },
];

export const JOIN_MISSION = {
  title: "Join Our Mission",
  text: "Whether you want to launch a currency for your community or help us build the tools, there is a place for you.",
  primary: "Start Your Community",
  secondary: "Join Our Team",
} as const;
