// Static legal text for /privacy and /terms (spec section 2). The pages add
// the contact address from LINKS as a mailto link at the end.
import type { LegalDocument } from "./types";

export const PRIVACY_UPDATED = "January 2024";

export const PRIVACY: LegalDocument = {
  title: "Privacy Policy",
  lead: "What personal data the Citizen Wallet website collects, why, and what you can ask us to do with it.",
  sections: [
    {
      id: "scope",
      title: "Who We Are and What This Covers",
      paragraphs: [
        "Citizen Wallet builds open-source wallets and tools for community currencies. This policy covers this website, the intro request form and the purchase of hosted plans. The wallets themselves are self-custodial: we never hold your keys or your tokens.",
      ],
    },
    {
      id: "collected",
      title: "Data We Collect",
      paragraphs: ["We only collect what you give us or what is needed to run the site:"],
      list: [
        "Intro request form: your community's name, the contact person, email address, website, description and the topics you pick.",
        "Hosted plans: the email address and billing details you enter at checkout, handled by our payment provider.",
        "Technical data: server logs with IP address, browser and pages requested, kept for security and troubleshooting.",
      ],
      after: "We do not use advertising trackers and we do not sell personal data.",
    },
    {
      id: "contact-form",
      title: "The Intro Request Form",
      paragraphs: [
        "When you send an intro request, your answers are stored in our workspace so that our team can reply and prepare a call. We use them only to answer your request and follow up on it. We keep them for as long as we are in touch and delete them on request.",
      ],
    },
    {
      id: "payments",
      title: "Payments",
      paragraphs: [
        "Payments for hosted plans are processed by Stripe. Your card details go directly to Stripe and never reach our servers. We receive the confirmation of your payment, the amount, the currency and your email address, which we keep for accounting and to manage your subscription. Stripe's own privacy policy applies to the data it processes.",
      ],
    },
    {
      id: "blockchain",
      title: "Blockchain Transactions",
      paragraphs: [
        "Transactions made with community tokens are recorded on public blockchains. They are visible to anyone and cannot be deleted, by us or by anyone else. Wallet addresses are not linked to your name unless you share that link yourself.",
      ],
    },
    {
      id: "sharing",
      title: "Sharing and Processors",
      paragraphs: [
        "We share data only with the services that help us run the site, such as our hosting provider, our workspace for intro requests and Stripe for payments, and only as far as they need it. We may also disclose data when the law requires it.",
      ],
    },
    {
      id: "rights",
      title: "Your Rights",
      paragraphs: ["Under the GDPR and similar laws you can:"],
      list: [
        "ask for a copy of the personal data we hold about you;",
        "have it corrected or deleted;",
        "object to or restrict how we use it;",
        "complain to your data protection authority.",
      ],
    },
    {
      id: "changes",
      title: "Changes to This Policy",
      paragraphs: [
        "We may update this policy when the site or the law changes. The date at the top shows the latest version.",
      ],
    },
  ],
  contactTitle: "Contact",
  contactText: "For any privacy question or request, email us at",
};

export const TERMS: LegalDocument = {
  title: "Terms of Service",
  lead: "The rules for using the Citizen Wallet website, wallets and hosted plans.",
  sections: [
    {
      id: "acceptance",
      title: "Acceptance of These Terms",
      paragraphs: [
        "By using this website, the Citizen Wallet apps or a hosted plan, you agree to these terms. If you use them on behalf of a community or organisation, you accept them for that organisation as well.",
      ],
    },
    {
      id: "services",
      title: "Our Services",
      paragraphs: [
        "Citizen Wallet provides software for community currencies: mobile, web, Discord and NFC wallets, and hosted infrastructure for communities that subscribe to a plan. The software is open source and can also be self-hosted under its own licence.",
      ],
    },
    {
      id: "wallets",
      title: "Wallets and Your Funds",
      paragraphs: [
        "The wallets are self-custodial. You, or the community that issues your card, are responsible for access to a wallet and its backup. Transactions on a blockchain are final: we cannot reverse, cancel or refund them.",
      ],
    },
    {
      id: "community-tokens",
      title: "Community Tokens",
      paragraphs: [
        "Each community decides how its own token is issued, used and redeemed. Citizen Wallet does not issue community tokens and is not a party to the arrangements between a community and its members. Communities are responsible for following the laws that apply to their currency.",
      ],
    },
    {
      id: "plans",
      title: "Hosted Plans and Payments",
      paragraphs: [
        "Hosted plans are billed monthly or yearly in advance through Stripe. Subscriptions renew automatically until cancelled; a cancellation takes effect at the end of the current period. Prices may change with notice before your next billing period.",
      ],
    },
    {
      id: "acceptable-use",
      title: "Acceptable Use",
      paragraphs: ["You agree not to use the services to:"],
      list: [
        "break the law or help others do so, including fraud and money laundering;",
        "attack, overload or probe the services or other users;",
        "impersonate others or mislead members about a community currency.",
      ],
      after: "We may suspend hosted services that are used this way.",
    },
    {
      id: "liability",
      title: "Disclaimers and Liability",
      paragraphs: [
        "The services are provided as they are, without warranties. Blockchains, networks and third-party services can fail or change. As far as the law allows, we are not liable for indirect losses, lost profits or the value of tokens, and our total liability is limited to the fees you paid us in the last twelve months.",
      ],
    },
    {
      id: "changes",
      title: "Changes to These Terms",
      paragraphs: [
        "We may update these terms. When we make significant changes to plans you pay for, we will tell you in advance by email. Continuing to use the services after a change means you accept the new terms.",
      ],
    },
    {
      id: "law",
      title: "Governing Law",
      paragraphs: [
        "These terms are governed by the law of the place where Citizen Wallet is established. This does not take away any protection that the consumer law of your own country gives you.",
      ],
    },
  ],
  contactTitle: "Questions",
  contactText: "Questions about these terms? Email us at",
};
