// Services page content (spec sections 2 and 9): six services, three packages.
import type { Service, ServicePackage } from "../../../content/site/types";

export const SERVICES_INTRO = {
  title: "Our Services",
  lead: "From a branded wallet to smart contracts and onboarding, our team helps you launch and run a community currency that people actually use.",
} as const;

/** Every service and package button leads to the intro request form. */
export const SERVICES_CONTACT_PATH = "/contact";

export const SERVICES: Service[] = [
  {
    icon: "Wallet",
    title: "Custom Wallet Setup",
    description: "A wallet in your community's colours, name and token, published for iOS, Android and the web.",
    features: ["Branded mobile and web wallet", "Token and account deployment", "Custom domain", "Launch checklist"],
    price: "From $5,000",
    timeline: "2-4 weeks",
  },
  {
    icon: "Code",
    title: "API Integration",
    description: "Connect your shop, membership system or app to your community token through our APIs.",
    features: ["Payment and balance endpoints", "Webhooks for transactions", "Integration guidance", "Test environment"],
    price: "From $2,500",
    timeline: "1-2 weeks",
  },
  {
    icon: "FileCode2",
    title: "Smart Contract Development",
    description: "Contracts tailored to your currency's rules: issuance, demurrage, mutual credit limits or vouchers.",
    features: ["Custom token logic", "Deployment on your chosen chain", "Full test suite", "Documentation"],
    price: "From $10,000",
    timeline: "4-8 weeks",
  },
  {
    icon: "Users",
    title: "Community Onboarding",
    description: "Workshops and materials that get residents, merchants and volunteers paying with confidence.",
    features: ["Merchant training sessions", "Printed vouchers and guides", "Launch event support", "Feedback rounds"],
    price: "From $3,000",
    timeline: "2-3 weeks",
  },
  {
    icon: "ShieldCheck",
    title: "Security Audit",
    description: "An independent review of your contracts and setup before real value starts to move.",
    features: ["Contract code review", "Configuration review", "Written findings report", "Fix verification"],
    price: "From $7,500",
    timeline: "2-3 weeks",
  },
  {
    icon: "Headphones",
    title: "Premium Support",
    description: "A direct line to the team that builds the wallet, for communities where payments cannot wait.",
    features: ["Priority response", "Dedicated support channel", "Monthly check-in call", "Upgrade assistance"],
    price: "$500/month",
    timeline: "Immediate",
  },
];

/** The badge on the package marked popular. */
export const POPULAR_BADGE = "Most Popular";

export const PACKAGES: ServicePackage[] = [
  {
    name: "Starter",
    price: "$10,000",
    description: "Everything a new community needs to launch its first currency.",
    features: ["Custom wallet setup", "Token deployment", "Onboarding workshop", "3 months support"],
    popular: false,
    buttonText: "Get Started",
  },
  {
    name: "Professional",
    price: "$25,000",
    description: "For growing communities connecting merchants, cards and existing systems.",
    features: ["Everything in Starter", "API integration", "NFC cards and point of sale", "6 months premium support"],
    popular: true,
    buttonText: "Get Started",
  },
  {
    name: "Enterprise",
    price: "Custom pricing",
    description: "For cities and large networks with custom contracts, audits and service levels.",
    features: ["Everything in Professional", "Smart contract development", "Security audit", "Dedicated support team"],
    popular: false,
    buttonText: "Contact Sales",
  },
];
