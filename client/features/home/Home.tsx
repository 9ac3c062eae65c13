import { ArrowRight, CalendarCheck, MessageCircle, Play, Smartphone, Sparkles } from "lucide-react";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { ExternalLink } from "../../components/ExternalLink";
import { GradientFill } from "../../components/GradientFill";
import { StatusBadge } from "../../components/StatusBadge";
import { HOME_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";
import {
  CHAINS,
  CTA,
  FEATURES,
  HERO,
  LAUNCH_BANNER,
  PAYMENT_OPTIONS,
  USE_CASES,
  WHY,
} from "./content";
import type { Chain, Feature, FeatureCategory, UseCase } from "../../../content/site/types";
import { LINKS } from "../../../content/site/links";

export function meta(): PageMeta {
  return {
    title: "Citizen Wallet — the wallet for your community currency",
    description:
      "Send, receive and spend community tokens without gas fees or seed phrases: mobile, web, NFC and Discord wallets for local currencies, event tokens and loyalty programs.",
  };
}

export default function Home(_props: PageProps) {
  return (
    <>
      <Hero />
      <FeaturesSection />
      <UseCasesSection />
      <PaymentOptionsSection />
      <ChainCarousel />
      <CallToAction />
    </>
  );
}

function Hero() {
  return (
    <section className="relative overflow-hidden bg-gradient-to-br from-brand-50 via-white to-emerald-50">
      <div className="mx-auto grid max-w-7xl items-center gap-12 px-4 py-16 sm:px-6 sm:py-24 lg:grid-cols-2 lg:px-8">
        <div className="text-center lg:text-left">
          <Link
            to={LAUNCH_BANNER.to}
            className="inline-flex items-center gap-2 rounded-full border border-brand-100 bg-white px-4 py-1.5 text-sm font-medium text-brand-700 shadow-sm hover:border-brand-500"
          >
            <Sparkles className="h-4 w-4 shrink-0" aria-hidden="true" />
            <span>{LAUNCH_BANNER.text}</span>
            <ArrowRight className="h-4 w-4 shrink-0" aria-hidden="true" />
          </Link>
          <h1 className="mt-6 text-4xl font-bold tracking-tight text-slate-900 sm:text-5xl lg:text-6xl">{HERO.title}</h1>
          <p className="mx-auto mt-6 max-w-xl text-lg text-slate-600 lg:mx-0">{HERO.description}</p>
          <div className="mt-8 flex flex-col items-center justify-center gap-3 sm:flex-row lg:justify-start">
            <StoreButton href={LINKS.appStore} icon={<Smartphone className="h-6 w-6" aria-hidden="true" />} small="Download on the" big="App Store" />
            <StoreButton href={LINKS.googlePlay} icon={<Play className="h-6 w-6" aria-hidden="true" />} small="Get it on" big="Google Play" />
          </div>
          <ChainStrip chains={CHAINS} />
        </div>
        <PhonePreview />
      </div>
    </section>
  );
}

function StoreButton({ href, icon, small, big }: { href: string; icon: ReactNode; small: string; big: string }) {
  return (
    <ExternalLink
      href={href}
      className="inline-flex w-56 items-center gap-3 rounded-xl bg-slate-900 px-5 py-3 text-left text-white shadow-sm transition hover:bg-slate-700 sm:w-auto"
    >
      {icon}
      <span className="leading-tight">
        <span className="block text-xs text-slate-300">{small}</span>
        <span className="block text-base font-semibold">{big}</span>
      </span>
    </ExternalLink>
  );
}

/** The supported-chains strip under the download buttons: name and logo. */
function ChainStrip({ chains }: { chains: Chain[] }) {
  return (
    <div className="mt-10">
      <h2 className="text-sm font-semibold uppercase tracking-wide text-slate-600">Runs on</h2>
      <ul className="mt-4 flex flex-wrap items-center justify-center gap-x-6 gap-y-3 lg:justify-start">
        {chains.map((chain) => (
          <li key={chain.name} className="flex items-center gap-2">
            <img src={chain.logo} alt={`${chain.name} logo`} width={28} height={28} className="h-7 w-7" />
            <span className="text-sm font-medium text-slate-700">{chain.name}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A decorative wallet screen drawn with markup (no image request). */
function PhonePreview() {
  return (
    <div className="hidden justify-center lg:flex" aria-hidden="true">
      <div className="w-72 rounded-[2.5rem] border-8 border-slate-900 bg-white p-5 shadow-2xl">
        <div className="mx-auto h-1.5 w-16 rounded-full bg-slate-200" />
        <div className="mt-6 rounded-2xl bg-gradient-to-br from-brand-600 to-emerald-500 p-5 text-white">
          <p className="text-xs uppercase tracking-wide text-white/80">Community balance</p>
          <p className="mt-2 text-3xl font-bold">124.50</p>
          <p className="text-sm text-white/90">Neighbourhood Token</p>
        </div>
        <div className="mt-5 grid grid-cols-2 gap-3 text-center text-sm font-semibold">
          <div className="rounded-xl bg-slate-100 py-3 text-slate-800">Send</div>
          <div className="rounded-xl bg-slate-100 py-3 text-slate-800">Receive</div>
        </div>
        <ul className="mt-5 space-y-3 text-sm">
          {[
            ["Bakery on the corner", "−4.20"],
            ["Market voucher", "+20.00"],
            ["Community garden", "−2.00"],
          ].map(([who, amount]) => (
            <li key={who} className="flex items-center justify-between">
              <span className="text-slate-700">{who}</span>
              <span className={amount.startsWith("+") ? "font-semibold text-emerald-700" : "font-semibold text-slate-900"}>{amount}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

function SectionHeading({ id, eyebrow, title, lead }: { id: string; eyebrow: string; title: string; lead: string }) {
  return (
    <div className="mx-auto max-w-3xl text-center">
      <p className="text-sm font-semibold uppercase tracking-wide text-brand-700">{eyebrow}</p>
      <h2 id={id} className="mt-2 text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{title}</h2>
      <p className="mt-4 text-lg text-slate-600">{lead}</p>
    </div>
  );
}

const CATEGORY_STYLES: Record<FeatureCategory, string> = {
  Core: "bg-brand-50 text-brand-700",
  Physical: "bg-violet-50 text-violet-700",
  Business: "bg-amber-50 text-amber-800",
  Technical: "bg-slate-100 text-slate-700",
};

function FeaturesSection() {
  return (
    <section id="features" aria-labelledby="features-title" className="scroll-mt-20 bg-white py-20">
      <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
        <SectionHeading
          id="features-title"
          eyebrow="Features"
          title="Everything your community needs to pay and get paid"
          lead="Built for people who have never touched crypto, and for the organisers and merchants who serve them."
        />
        <ul className="mt-14 grid gap-6 sm:grid-cols-2 lg:grid-cols-3">
          {FEATURES.map((feature) => (
            <FeatureCard key={feature.title} feature={feature} />
          ))}
        </ul>
      </div>
    </section>
  );
}

function FeatureCard({ feature }: { feature: Feature }) {
  const Icon = HOME_ICONS[feature.icon];
  return (
    <li className="flex flex-col rounded-2xl border border-slate-200 bg-white p-6 shadow-sm transition hover:shadow-md">
      <div className="flex items-start justify-between gap-4">
        <span className="flex h-12 w-12 items-center justify-center rounded-xl bg-brand-50 text-brand-600">
          <Icon className="h-6 w-6" aria-hidden="true" />
        </span>
        <StatusBadge status={feature.status} />
      </div>
      <h3 className="mt-5 text-lg font-semibold text-slate-900">{feature.title}</h3>
      <p className="mt-2 flex-1 text-slate-600">{feature.description}</p>
      <p className="mt-4">
        <span className={`rounded-md px-2 py-1 text-xs font-medium ${CATEGORY_STYLES[feature.category]}`}>
          <span className="sr-only">Category: </span>
          {feature.category}
        </span>
      </p>
    </li>
  );
}

function UseCasesSection() {
  return (
    <section aria-labelledby="use-cases-title" className="bg-slate-50 py-20">
      <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
        <SectionHeading
          id="use-cases-title"
          eyebrow="Use cases"
          title="One wallet, many kinds of community money"
          lead="Whatever your currency is for, Citizen Wallet gives your members a simple way to hold and spend it."
        />
        <ul className="mt-14 grid gap-6 sm:grid-cols-2 lg:grid-cols-3">
          {USE_CASES.map((useCase) => (
            <UseCaseCard key={useCase.title} useCase={useCase} />
          ))}
        </ul>
      </div>
    </section>
  );
}

function UseCaseCard({ useCase }: { useCase: UseCase }) {
  const Icon = HOME_ICONS[useCase.icon];
  return (
    <li className="overflow-hidden rounded-2xl bg-white shadow-sm ring-1 ring-slate-200">
      <div className="relative isolate h-2">
        <GradientFill gradient={useCase.gradient} />
      </div>
      <div className="p-6">
        <span className="relative isolate flex h-12 w-12 items-center justify-center overflow-hidden rounded-xl text-white">
          <GradientFill gradient={useCase.gradient} diagonal />
          <Icon className="h-6 w-6" aria-hidden="true" />
        </span>
        <h3 className="mt-5 text-lg font-semibold text-slate-900">{useCase.title}</h3>
        <p className="mt-2 text-slate-600">{useCase.description}</p>
      </div>
    </li>
  );
}

function PaymentOptionsSection() {
  return (
    <section id="about" className="scroll-mt-20 bg-white py-20">
      <div className="mx-auto grid max-w-7xl gap-12 px-4 sm:px-6 lg:grid-cols-2 lg:px-8">
        <div>
          <h2 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{WHY.title}</h2>
          {WHY.paragraphs.map((p) => (
            <p key={p} className="mt-5 text-lg text-slate-600">{p}</p>
          ))}
        </div>
        <div className="rounded-3xl bg-gradient-to-br from-brand-50 to-emerald-50 p-8">
          <h2 className="text-2xl font-bold text-slate-900">Multiple Payment Options</h2>
          <p className="mt-2 text-slate-600">Members pay the way that suits them, with or without a smartphone.</p>
          <ul className="mt-6 grid gap-4 sm:grid-cols-2">
            {PAYMENT_OPTIONS.map((option) => {
              const Icon = HOME_ICONS[option.icon];
              return (
                <li key={option.title} className="rounded-2xl bg-white p-5 shadow-sm">
                  <Icon className="h-6 w-6 text-brand-600" aria-hidden="true" />
                  <h3 className="mt-3 font-semibold text-slate-900">{option.title}</h3>
                  <p className="mt-1 text-sm text-slate-600">{option.description}</p>
                </li>
              );
            })}
          </ul>
        </div>
      </div>
    </section>
  );
}

/** Enough copies of the chain list to fill wide screens; the track scrolls
 *  by half its width, so it holds two identical halves. */
const COPIES_PER_HALF = 2;
const MARQUEE_ITEMS = Array.from({ length: COPIES_PER_HALF * 2 }, () => CHAINS).flat();

function ChainCarousel() {
  return (
    <section aria-labelledby="chains-title" className="border-y border-slate-200 bg-slate-50 py-16">
      <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
        <h2 id="chains-title" className="text-center text-2xl font-bold text-slate-900">Supported Blockchains</h2>
        <p className="mx-auto mt-2 max-w-2xl text-center text-slate-600">
          Launch your currency on the network that fits your community.
        </p>
      </div>
      <div className="mt-10 overflow-hidden [mask-image:linear-gradient(to_right,transparent,black_10%,black_90%,transparent)] motion-reduce:[mask-image:none]">
        <ul className="flex w-max animate-marquee hover:[animation-play-state:paused] motion-reduce:w-full motion-reduce:animate-none motion-reduce:flex-wrap motion-reduce:justify-center">
          {MARQUEE_ITEMS.map((chain, i) => {
            const duplicate = i >= CHAINS.length;
            return (
              <li
                key={`${chain.name}-${i}`}
                aria-hidden={duplicate || undefined}
                className={`flex shrink-0 items-center gap-3 px-8 py-2 ${duplicate ? "motion-reduce:hidden" : ""}`}
              >
                <img src={chain.logo} alt={duplicate ? "" : `${chain.name} logo`} width={40} height={40} loading="lazy" className="h-10 w-10" />
                <span className="text-lg font-semibold text-slate-700">{chain.name}</span>
              </li>
            );
          })}
        </ul>
      </div>
    </section>
  );
}

function CallToAction() {
  return (
    <section aria-labelledby="cta-title" className="bg-white py-20">
      <div className="mx-auto max-w-5xl px-4 sm:px-6 lg:px-8">
        <div className="rounded-3xl bg-gradient-to-br from-brand-700 to-brand-500 px-6 py-14 text-center text-white shadow-xl sm:px-12">
          <h2 id="cta-title" className="text-3xl font-bold tracking-tight sm:text-4xl">{CTA.title}</h2>
          <p className="mx-auto mt-4 max-w-2xl text-lg text-brand-50">{CTA.text}</p>
          <div className="mt-8 flex flex-col items-center justify-center gap-3 sm:flex-row">
            <ExternalLink
              href={LINKS.bookCall}
              className="inline-flex items-center gap-2 rounded-lg bg-white px-6 py-3 font-semibold text-brand-700 shadow-sm hover:bg-brand-50"
            >
              <CalendarCheck className="h-5 w-5" aria-hidden="true" />
              Book a Call
            </ExternalLink>
            <ExternalLink
              href={LINKS.discord}
              className="inline-flex items-center gap-2 rounded-lg border border-white/70 px-6 py-3 font-semibold text-white hover:bg-white/10"
            >
              <MessageCircle className="h-5 w-5" aria-hidden="true" />
              Join Discord Community
            </ExternalLink>
          </div>
        </div>
      </div>
    </section>
  );
}
