import { ArrowRight, Check, Download, ExternalLink as ExternalLinkIcon } from "lucide-react";
import { Link } from "react-router";
import { ExternalLink } from "../../components/ExternalLink";
import { PageHero } from "../../components/Bands";
import { Picture } from "../../components/Picture";
import { StatusBadge } from "../../components/StatusBadge";
import { WALLETS_ICONS } from "./icons";
import type { FeaturedCommunity, PageMeta, PageProps, WalletsData } from "../../lib/types";
import { FEATURED_COMMUNITIES, WALLET_PRODUCTS, WALLETS_INTRO } from "./content";
import type { WalletProduct } from "../../../content/site/types";

export function meta(): PageMeta {
  return {
    title: "Our Wallets — Citizen Wallet",
    description:
      "Mobile, web burner, NFC and Discord wallets for community currencies, and the featured communities that already pay with them.",
  };
}

export default function Wallets({ data, state }: PageProps<WalletsData>) {
  const communities = data?.communities;
  // The loader's data is embedded on the first view; on client navigation it
  // is on its way while `data` is undefined. A failed load shows no cards.
  const loading = communities === undefined && state !== "error";
  return (
    <>
      <PageHero title={WALLETS_INTRO.title} lead={WALLETS_INTRO.lead} />

      <section aria-labelledby="products-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <h2 id="products-title" className="sr-only">Wallet products</h2>
          <ul className="grid gap-8 md:grid-cols-2">
            {WALLET_PRODUCTS.map((product, i) => (
              <ProductCard key={product.name} product={product} first={i === 0} />
            ))}
          </ul>
        </div>
      </section>

      <section aria-labelledby="communities-title" className="bg-slate-50 py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="communities-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">
              {FEATURED_COMMUNITIES.title}
            </h2>
            {communities && communities.length > 0 && (
              <p className="mt-4 text-lg text-slate-600">{FEATURED_COMMUNITIES.lead}</p>
            )}
          </div>
          {loading && (
            <p className="mt-10 text-center text-slate-600" role="status">{FEATURED_COMMUNITIES.loading}</p>
          )}
          {communities && communities.length > 0 && (
            <ul className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-3">
              {communities.map((community) => (
                <CommunityCard key={community.alias} community={community} />
              ))}
            </ul>
          )}
        </div>
      </section>

      <section aria-labelledby="services-title" className="bg-slate-50 py-16">
        <div className="mx-auto max-w-3xl px-4 text-center">
          <h2 id="services-title" className="text-2xl font-bold text-slate-900">Need a wallet built for your community?</h2>
          <p className="mt-3 text-slate-600">
            We set up custom wallets, integrations, smart contracts and onboarding for community currencies.
          </p>
          <Link to="/services" className="mt-6 inline-block font-semibold text-brand-700 underline hover:text-brand-600">
            See Our Services
          </Link>
        </div>
      </section>
    </>
  );
}

const BUTTON_CLASS =
  "inline-flex w-full items-center justify-center gap-2 rounded-lg bg-brand-600 px-5 py-3 font-semibold text-white shadow-sm hover:bg-brand-700 sm:w-auto";

function ProductCard({ product, first }: { product: WalletProduct; first: boolean }) {
  const Icon = WALLETS_ICONS[product.icon];
  return (
    <li className="flex flex-col rounded-2xl border border-slate-200 bg-white p-8 shadow-sm transition hover:shadow-md">
      {/* Every illustration is 480x240: the explicit size reserves its box before it loads.
          The first card's is in the first screen (often its largest paint): not lazy. */}
      <img
        src={product.image.src}
        alt={product.image.alt}
        width={480}
        height={240}
        loading={first ? "eager" : "lazy"}
        decoding="async"
        className="mb-6 h-auto w-full rounded-xl"
      />
      <div className="flex items-start justify-between gap-4">
        <span className="flex h-14 w-14 items-center justify-center rounded-2xl bg-gradient-to-br from-brand-600 to-emerald-500 text-white">
          <Icon className="h-7 w-7" aria-hidden="true" />
        </span>
        <StatusBadge status={product.status} />
      </div>
      <h3 className="mt-6 text-2xl font-bold text-slate-900">{product.name}</h3>
      <p className="mt-2 text-slate-600">{product.description}</p>

      <div className="mt-5 flex flex-wrap items-center gap-2">
        <span className="sr-only">Platforms:</span>
        {product.platforms.map((platform) => (
          <span key={platform} className="rounded-md bg-slate-100 px-2.5 py-1 text-xs font-medium text-slate-700">
            {platform}
          </span>
        ))}
      </div>

      <ul className="mt-6 flex-1 space-y-2">
        {product.features.map((feature) => (
          <li key={feature} className="flex items-start gap-2 text-slate-700">
            <Check className="mt-0.5 h-5 w-5 shrink-0 text-emerald-600" aria-hidden="true" />
            {feature}
          </li>
        ))}
      </ul>

      <div className="mt-8 flex flex-col gap-4 border-t border-slate-100 pt-6 sm:flex-row sm:items-center sm:justify-between">
        <p className="flex items-center gap-2 text-slate-700">
          <Download className="h-5 w-5 text-brand-600" aria-hidden="true" />
          <span className="font-semibold text-slate-900">{product.downloads}</span> downloads
        </p>
        {product.link.kind === "internal" ? (
          <Link to={product.link.to} className={BUTTON_CLASS}>
            {product.buttonText}
            {/* The button text is generic; the link's name says where it goes. */}
            <span className="sr-only">{` about the ${product.name}`}</span>
            <ArrowRight className="h-4 w-4" aria-hidden="true" />
          </Link>
        ) : (
          <ExternalLink href={product.link.href} className={BUTTON_CLASS}>
            {product.buttonText}
            <ExternalLinkIcon className="h-4 w-4" aria-hidden="true" />
            <span className="sr-only">(opens in a new tab)</span>
          </ExternalLink>
        )}
      </div>
    </li>
  );
}

function CommunityCard({ community }: { community: FeaturedCommunity }) {
  return (
    <li className="flex gap-4 rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
      <Picture image={community.logo} alt={`${community.name} logo`} layout="logo" className="h-14 w-14 shrink-0 rounded-full bg-slate-100 object-contain" />
      <div className="min-w-0">
        <h3 className="text-lg font-semibold text-slate-900">{community.name}</h3>
        <p className="mt-1 text-sm text-slate-600">{community.description}</p>
        <p className="mt-3">
          <span className="rounded-md bg-brand-50 px-2 py-1 text-xs font-semibold text-brand-700">
            <span className="sr-only">Token: </span>
            {community.symbol}
          </span>
        </p>
      </div>
    </li>
  );
}
