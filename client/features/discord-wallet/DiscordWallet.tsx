import { CalendarDays } from "lucide-react";
import { Link } from "react-router";
import { LINKS } from "../../../content/site/links";
import {
  DISCORD_BENEFITS,
  DISCORD_CHAT,
  DISCORD_COMMANDS,
  DISCORD_TEXT,
  DISCORD_USE_CASES,
} from "../../../content/site/products";
import { DiscordChat } from "./DiscordChat";
import { ExternalLink } from "../../components/ExternalLink";
import { IconCards } from "../../components/Grids";
import { CallToAction, OUTLINE_LINK, PageHero } from "../../components/Bands";
import { Icon } from "../../lib/icons/Icon";
import { DISCORD_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "Discord Wallet — Citizen Wallet",
    description:
      "A wallet bot for Discord communities: send tokens with /send, check balances with /balance, and reward contributors in your own currency.",
  };
}

export default function DiscordWallet(_props: PageProps) {
  return (
    <>
      <PageHero title="Discord Wallet" lead={DISCORD_TEXT.lead}>
        <ExternalLink
          href={LINKS.bookCall}
          className="inline-flex items-center gap-2 rounded-lg bg-[#4752c4] px-6 py-3 font-semibold text-white hover:bg-[#3c45a5]"
        >
          <CalendarDays className="h-5 w-5" aria-hidden="true" />
          {DISCORD_TEXT.bookCall}
        </ExternalLink>
      </PageHero>

      <section aria-labelledby="chat-heading" className="mx-auto grid max-w-7xl items-start gap-12 px-4 py-16 sm:px-6 lg:grid-cols-2 lg:px-8">
        <div>
          <h2 id="chat-heading" className="text-3xl font-bold text-slate-900">{DISCORD_TEXT.chatTitle}</h2>
          <p className="mt-4 text-lg text-slate-600">{DISCORD_TEXT.chatLead}</p>
          <h3 className="mt-8 text-lg font-semibold text-slate-900">{DISCORD_TEXT.commandsTitle}</h3>
          <dl className="mt-4 space-y-4">
            {DISCORD_COMMANDS.map((c) => (
              <div key={c.command} className="flex gap-4">
                <dt>
                  <code className="rounded bg-slate-100 px-2 py-1 font-mono text-sm font-semibold text-brand-700">{c.command}</code>
                </dt>
                <dd className="text-slate-700">{c.description}</dd>
              </div>
            ))}
          </dl>
        </div>
        <DiscordChat channel={DISCORD_CHAT.channel} messages={DISCORD_CHAT.messages} label={DISCORD_TEXT.chatLabel} />
      </section>

      <section aria-labelledby="use-cases-heading" className="bg-slate-50">
        <div className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
          <h2 id="use-cases-heading" className="text-center text-3xl font-bold text-slate-900">{DISCORD_TEXT.useCasesTitle}</h2>
          <IconCards
            look={{
              list: "mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-3",
              item: "rounded-2xl border border-slate-200 bg-white p-6 shadow-sm",
              badge: "flex h-11 w-11 items-center justify-center rounded-xl bg-indigo-50 text-indigo-700",
            }}
            items={DISCORD_USE_CASES.map((u) => ({
              key: u.title,
              icon: <Icon set={DISCORD_ICONS} name={u.icon} className="h-6 w-6" aria-hidden="true" />,
              title: u.title,
              text: u.description,
            }))}
          />
        </div>
      </section>

      <section aria-labelledby="benefits-heading" className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
        <h2 id="benefits-heading" className="text-center text-3xl font-bold text-slate-900">{DISCORD_TEXT.benefitsTitle}</h2>
        <IconCards
          look={{
            list: "mt-12 grid gap-8 sm:grid-cols-2 lg:grid-cols-4",
            item: "text-center",
            badge: "mx-auto flex h-12 w-12 items-center justify-center rounded-full bg-brand-50 text-brand-700",
          }}
          items={DISCORD_BENEFITS.map((b) => ({
            key: b.title,
            icon: <Icon set={DISCORD_ICONS} name={b.icon} className="h-6 w-6" aria-hidden="true" />,
            title: b.title,
            text: b.description,
          }))}
        />
      </section>

      <CallToAction
        id="discord-cta-heading"
        title={DISCORD_TEXT.ctaTitle}
        text={DISCORD_TEXT.ctaText}
        band="bg-[#4752c4]"
        lineColour="text-white"
      >
        <Link to="/pricing" className="rounded-lg bg-white px-6 py-3 font-semibold text-[#3c45a5] hover:bg-indigo-50">
          {DISCORD_TEXT.pricingLink}
        </Link>
        <Link to="/contact" className={OUTLINE_LINK}>
          Request an Intro
        </Link>
      </CallToAction>
    </>
  );
}
