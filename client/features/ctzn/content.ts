// The CTZN token page (spec section 9): static figures, tokenomics and the
// funding programme. The figures are fixed text, not live market data.
import type { FundingStep, TokenAllocation, TokenStat } from "../../../content/site/types";

export const CTZN_STATS: TokenStat[] = [
  { label: "Total Supply", value: "6,943,851", note: "CTZN" },
  { label: "Price", value: "$0.07741", note: "about, per CTZN" },
  { label: "Market Cap", value: "$536K" },
  { label: "Supporters", value: "228+" },
  { label: "Raised", value: "$15,322" },
];

/** Adds up to 100. */
export const TOKENOMICS: TokenAllocation[] = [
  { label: "Development", percent: 40, description: "Building and maintaining the wallets, the card system and the open-source stack." },
  { label: "Community Rewards", percent: 30, description: "Rewards for communities and contributors who grow the network." },
  { label: "Team and Advisors", percent: 20, description: "The people who build and guide Citizen Wallet, vested over time." },
  { label: "Liquidity and Operations", percent: 10, description: "Exchange liquidity and the day-to-day running of the services." },
];

/** Claimed benefit when paying a hosted plan with the token. */
export const CTZN_DISCOUNT = "up to 15% off";

export const FUNDING_PROGRAMME: { title: string; intro: string; steps: FundingStep[] } = {
  title: "Community Funding Programme",
  intro:
    "CTZN lets the people who use Citizen Wallet fund its development directly. Supporters buy the token, the proceeds pay for open-source work, and the token comes back as a discount on hosted plans.",
  steps: [
    { icon: "Coins", title: "Buy CTZN", description: "Get CTZN on a decentralised exchange on Base, or in the Citizen Wallet app." },
    { icon: "Sprout", title: "Fund open source", description: "Proceeds go to the development of the wallets, the NFC cards and the tools communities run on." },
    { icon: "HandCoins", title: "Pay your plan", description: `Pay your community's monthly fees in CTZN and save ${CTZN_DISCOUNT}.` },
    { icon: "Users", title: "Grow together", description: "Every new community strengthens the network that all supporters share." },
  ],
};

export const CTZN_TEXT = {
  lead: "CTZN is the community token behind Citizen Wallet. Holding it funds open-source tools for local currencies, and paying with it lowers your fees.",
  buy: "Buy CTZN",
  statsTitle: "CTZN at a Glance",
  statsNote: "Figures are indicative and not updated live.",
  chartTitle: "Price Chart",
  chartFrameTitle: "CTZN price chart on DEX Screener",
  tokenomicsTitle: "Tokenomics",
  tokenomicsLead: "How the total supply of CTZN is allocated.",
  discountTitle: `Save ${CTZN_DISCOUNT} on your plan`,
  discountText: `Communities that pay their monthly fees with CTZN get ${CTZN_DISCOUNT}.`,
  appsTitle: "Hold CTZN in Citizen Wallet",
  appsText: "Keep, send and receive CTZN in the Citizen Wallet app, without gas fees or seed phrases.",
  disclaimer: "CTZN is a utility token. Nothing on this page is financial advice; token prices can go down as well as up.",
};
