import { ArrowRight, BadgePercent, ShoppingCart } from "lucide-react";
import { Link } from "react-router";
import ctznCoin from "../../../content/images/products/ctzn-coin.svg";
import {
  CTZN_STATS,
  CTZN_TEXT,
  FUNDING_PROGRAMME,
  TOKENOMICS,
} from "./content";
import { LINKS } from "../../../content/site/links";
import { CtznTokenomics } from "./CtznTokenomics";
import { ExternalLink } from "../../components/ExternalLink";
import { CARD_GRID, IconCards } from "../../components/Grids";
import { MobileStoreButtons } from "../../components/MobileStoreButtons";
import { PageHero } from "../../components/Bands";
import { Icon } from "../../lib/icons/Icon";
import { CTZN_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "CTZN Token — Citizen Wallet",
    description:
      "CTZN funds Citizen Wallet: 6,943,851 supply, 228+ supporters, $15,322 raised. See the tokenomics, the funding programme and save up to 15% on plans.",
  };
}

export default function Ctzn(_props: PageProps) {
  return (
    <>
      <PageHero title="CTZN Token" lead={CTZN_TEXT.lead}>
        <ExternalLink
          href={LINKS.dex}
          className="inline-flex items-center gap-2 rounded-lg bg-brand-600 px-6 py-3 font-semibold text-white hover:bg-brand-700"
        >
          <ShoppingCart className="h-5 w-5" aria-hidden="true" />
          {CTZN_TEXT.buy}
        </ExternalLink>
      </PageHero>

      <section aria-labelledby="stats-heading" className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
        <h2 id="stats-heading" className="text-center text-3xl font-bold text-slate-900">{CTZN_TEXT.statsTitle}</h2>
        <dl className="mt-10 grid grid-cols-2 gap-4 md:grid-cols-3 lg:grid-cols-5">
          {CTZN_STATS.map((stat) => (
            <div key={stat.label} className="rounded-2xl border border-slate-200 bg-white p-6 text-center shadow-sm last:col-span-2 md:last:col-span-1">
              <dt className="text-sm font-medium text-slate-600">{stat.label}</dt>
              <dd className="mt-2 text-2xl font-bold tracking-tight text-slate-900">{stat.value}</dd>
              {stat.note && <dd className="mt-1 text-xs text-slate-600">{stat.note}</dd>}
            </div>
          ))}
        </dl>
        <p className="mt-4 text-center text-sm text-slate-600">{CTZN_TEXT.statsNote}</p>
      </section>

      <section aria-labelledby="chart-heading" className="bg-slate-50">
        <div className="mx-auto max-w-5xl px-4 py-16 sm:px-6 lg:px-8">
          <h2 id="chart-heading" className="text-center text-3xl font-bold text-slate-900">{CTZN_TEXT.chartTitle}</h2>
          <iframe
            src={LINKS.priceChart}
            title={CTZN_TEXT.chartFrameTitle}
            width={960}
            height={500}
            loading="lazy"
            referrerPolicy="strict-origin-when-cross-origin"
            className="mt-8 h-[420px] w-full rounded-2xl border border-slate-200 bg-white sm:h-[500px]"
          />
        </div>
      </section>

      <section aria-labelledby="tokenomics-heading" className="mx-auto max-w-5xl px-4 py-16 sm:px-6 lg:px-8">
        <h2 id="tokenomics-heading" className="text-3xl font-bold text-slate-900">{CTZN_TEXT.tokenomicsTitle}</h2>
        <p className="mt-2 text-lg text-slate-600">{CTZN_TEXT.tokenomicsLead}</p>
        <div className="mt-8">
          <CtznTokenomics allocations={TOKENOMICS} />
        </div>
      </section>

      <section aria-labelledby="funding-heading" className="bg-gradient-to-br from-amber-50 via-white to-emerald-50">
        <div className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="funding-heading" className="text-3xl font-bold text-slate-900">{FUNDING_PROGRAMME.title}</h2>
            <p className="mt-4 text-lg text-slate-700">{FUNDING_PROGRAMME.intro}</p>
          </div>
          <IconCards
            as="ol"
            look={{
              list: CARD_GRID,
              item: "rounded-2xl border border-slate-200 bg-white p-6 shadow-sm",
              badge: "flex h-11 w-11 items-center justify-center rounded-xl bg-amber-100 text-amber-800",
            }}
            items={FUNDING_PROGRAMME.steps.map((step, i) => ({
              key: step.title,
              icon: <Icon set={CTZN_ICONS} name={step.icon} className="h-6 w-6" aria-hidden="true" />,
              title: (
                <>
                  <span className="text-slate-500">{i + 1}. </span>
                  {step.title}
                </>
              ),
              text: step.description,
            }))}
          />
          <aside
            aria-labelledby="discount-heading"
            className="mx-auto mt-12 flex max-w-3xl flex-col items-center gap-4 rounded-2xl bg-slate-900 p-8 text-center text-white sm:flex-row sm:text-left"
          >
            <BadgePercent className="h-12 w-12 flex-none text-amber-400" aria-hidden="true" />
            <div className="flex-1">
              <h3 id="discount-heading" className="text-xl font-bold">{CTZN_TEXT.discountTitle}</h3>
              <p className="mt-1 text-slate-300">{CTZN_TEXT.discountText}</p>
            </div>
            <Link
              to="/pricing"
              className="inline-flex items-center gap-2 rounded-lg bg-white px-5 py-2.5 text-sm font-semibold text-slate-900 hover:bg-slate-100"
            >
              View Plans
              <ArrowRight className="h-4 w-4" aria-hidden="true" />
            </Link>
          </aside>
        </div>
      </section>

      <section aria-labelledby="apps-heading" className="mx-auto grid max-w-5xl items-center gap-10 px-4 py-16 sm:px-6 md:grid-cols-[auto_1fr] lg:px-8">
        <img src={ctznCoin} alt="The CTZN token" width={160} height={160} loading="lazy" className="mx-auto h-40 w-40" />
        <div className="text-center md:text-left">
          <h2 id="apps-heading" className="text-3xl font-bold text-slate-900">{CTZN_TEXT.appsTitle}</h2>
          <p className="mt-4 text-lg text-slate-600">{CTZN_TEXT.appsText}</p>
          <MobileStoreButtons className="mt-6 md:justify-start" />
        </div>
      </section>

      <p className="mx-auto max-w-3xl px-4 pb-16 text-center text-xs text-slate-600 sm:px-6 lg:px-8">{CTZN_TEXT.disclaimer}</p>
    </>
  );
}
