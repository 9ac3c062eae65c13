import { ArrowUpRight, Mail } from "lucide-react";
import { ExternalLink } from "../../components/ExternalLink";
import { CARD_GRID, CardGrid, IconCards } from "../../components/Grids";
import { PageHero } from "../../components/Bands";
import { ABOUT_ICONS } from "./icons";
import type { AboutData, PageMeta, PageProps, TeamMember } from "../../lib/types";
import {
  ABOUT_INTRO,
  JOIN_MISSION,
  MISSION,
  PARTNERS,
  PARTNERS_INTRO,
  TEAM,
  TIMELINE,
  VALUES,
} from "./content";
import type { Partner } from "../../../content/site/types";
import { LINKS } from "../../../content/site/links";

export function meta(): PageMeta {
  return {
    title: "About — Citizen Wallet",
    description:
      "Our mission to make community currencies as easy as cash, the values behind Citizen Wallet, the team, our journey from 2020 to the Brussels Pay launch and the partners who support us.",
  };
}

export default function About({ data, state }: PageProps<AboutData>) {
  // Loading while client navigation fetches the rows; a failed load shows an
  // empty team (spec section 8).
  const loading = state === "loading" || (data === undefined && state !== "error");
  const team = data?.team ?? [];
  return (
    <>
      <PageHero title={ABOUT_INTRO.title} lead={ABOUT_INTRO.lead} />

      <section aria-labelledby="mission-title" className="bg-white py-20">
        <div className="mx-auto max-w-3xl px-4 sm:px-6 lg:px-8">
          <h2 id="mission-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{MISSION.title}</h2>
          {MISSION.paragraphs.map((p) => (
            <p key={p} className="mt-5 text-lg leading-relaxed text-slate-600">{p}</p>
          ))}
        </div>
      </section>

      <section aria-labelledby="values-title" className="bg-slate-50 py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <h2 id="values-title" className="text-center text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Our Values</h2>
          <IconCards
            look={{
              list: CARD_GRID,
              item: "rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200",
              badge: "flex h-12 w-12 items-center justify-center rounded-xl bg-brand-50 text-brand-600",
              title: "mt-5 text-lg font-semibold text-slate-900",
            }}
            items={VALUES.map((value) => {
              const Icon = ABOUT_ICONS[value.icon];
              return { key: value.title, icon: <Icon className="h-6 w-6" aria-hidden="true" />, title: value.title, text: value.description };
            })}
          />
        </div>
      </section>

      <section aria-labelledby="team-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="team-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{TEAM.title}</h2>
            {!loading && team.length > 0 && <p className="mt-4 text-lg text-slate-600">{TEAM.lead}</p>}
          </div>
          {loading ? (
            <p className="mt-10 text-center text-slate-600" role="status">{TEAM.loading}</p>
          ) : (
            team.length > 0 && (
              <ul className="mt-12 flex flex-wrap justify-center gap-8">
                {team.map((member, i) => (
                  <TeamCard key={`${member.name}-${i}`} member={member} />
                ))}
              </ul>
            )
          )}
        </div>
      </section>

      <section aria-labelledby="journey-title" className="bg-slate-50 py-20">
        <div className="mx-auto max-w-3xl px-4 sm:px-6 lg:px-8">
          <h2 id="journey-title" className="text-center text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">Our Journey</h2>
          <ol className="mt-12 space-y-8 border-l-2 border-brand-100 pl-8">
            {TIMELINE.map((entry) => (
              <li key={entry.year} className="relative">
                <span className="absolute -left-[2.6rem] top-1 h-4 w-4 rounded-full border-4 border-white bg-brand-600 ring-2 ring-brand-100" aria-hidden="true" />
                <p className="text-sm font-bold text-brand-700">{entry.year}</p>
                <h3 className="mt-1 text-xl font-semibold text-slate-900">{entry.title}</h3>
                <p className="mt-2 text-slate-600">{entry.description}</p>
              </li>
            ))}
          </ol>
        </div>
      </section>

      <section aria-labelledby="partners-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="partners-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{PARTNERS_INTRO.title}</h2>
            <p className="mt-4 text-lg text-slate-600">{PARTNERS_INTRO.lead}</p>
          </div>
          <CardGrid>
            {PARTNERS.map((partner) => (
              <PartnerCard key={partner.name} partner={partner} />
            ))}
          </CardGrid>
          <p className="mt-12 text-center text-slate-700">
            {PARTNERS_INTRO.contactPrompt}{" "}
            <a
              href={`mailto:${LINKS.contactEmail}`}
              className="inline-flex items-center gap-1 font-semibold text-brand-700 underline-offset-4 hover:underline"
            >
              <Mail className="h-4 w-4" aria-hidden="true" />
              {PARTNERS_INTRO.contactLabel}
            </a>
          </p>
        </div>
      </section>

      <section aria-labelledby="join-title" className="bg-white pb-20">
        <div className="mx-auto max-w-5xl px-4 sm:px-6 lg:px-8">
          <div className="rounded-3xl bg-gradient-to-br from-brand-700 to-brand-500 px-6 py-14 text-center text-white shadow-xl sm:px-12">
            <h2 id="join-title" className="text-3xl font-bold tracking-tight sm:text-4xl">{JOIN_MISSION.title}</h2>
            <p className="mx-auto mt-4 max-w-2xl text-lg text-brand-50">{JOIN_MISSION.text}</p>
            <div className="mt-8 flex flex-col items-center justify-center gap-3 sm:flex-row">
              <button type="button" className="rounded-lg bg-white px-6 py-3 font-semibold text-brand-700 shadow-sm hover:bg-brand-50">
                {JOIN_MISSION.primary}
              </button>
              <button type="button" className="rounded-lg border border-white/70 px-6 py-3 font-semibold text-white hover:bg-white/10">
                {JOIN_MISSION.secondary}
              </button>
            </div>
          </div>
        </div>
      </section>
    </>
  );
}

/** "Ada Lovelace" -> "AL"; the placeholder when a member has no image. */
function initials(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => word[0]!.toUpperCase())
    .join("");
}

function TeamCard({ member }: { member: TeamMember }) {
  const photo = member.image_url.startsWith("http");
  return (
    <li className="flex w-full flex-col items-center rounded-2xl border border-slate-200 bg-white p-8 text-center shadow-sm sm:w-[calc(50%-1rem)] lg:w-[calc((100%-4rem)/3)]">
      {photo ? (
        <img
          src={member.image_url}
          alt={member.name}
          width={112}
          height={112}
          loading="lazy"
          className="h-28 w-28 rounded-full object-cover"
        />
      ) : (
        <span
          className="flex h-28 w-28 items-center justify-center rounded-full bg-gradient-to-br from-brand-100 to-emerald-100 text-4xl font-semibold text-brand-700"
          aria-hidden="true"
        >
          {member.image_url || initials(member.name)}
        </span>
      )}
      <h3 className="mt-5 text-lg font-semibold text-slate-900">{member.name}</h3>
      {member.role && <p className="text-sm font-medium text-brand-700">{member.role}</p>}
      {member.bio && <p className="mt-3 text-slate-600">{member.bio}</p>}
      {(member.linkedin || member.x_profile) && (
        <ul className="mt-5 flex gap-3">
          {member.linkedin && (
            <li>
              <ExternalLink
                href={member.linkedin}
                aria-label={`${member.name} on LinkedIn`}
                className="inline-flex items-center gap-1 rounded-md bg-slate-100 px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-200"
              >
                LinkedIn
                <ArrowUpRight className="h-3.5 w-3.5" aria-hidden="true" />
              </ExternalLink>
            </li>
          )}
          {member.x_profile && (
            <li>
              <ExternalLink
                href={member.x_profile}
                aria-label={`${member.name} on X`}
                className="inline-flex items-center gap-1 rounded-md bg-slate-100 px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-200"
              >
                X
                <ArrowUpRight className="h-3.5 w-3.5" aria-hidden="true" />
              </ExternalLink>
            </li>
          )}
        </ul>
      )}
    </li>
  );
}

function PartnerCard({ partner }: { partner: Partner }) {
  return (
    <li>
      <ExternalLink
        href={partner.url}
        className="group flex h-full flex-col rounded-2xl border border-slate-200 bg-white p-6 shadow-sm transition hover:border-brand-500 hover:shadow-md"
      >
        <span className="flex items-start justify-between gap-3">
          <span className="flex h-12 w-12 shrink-0 items-center justify-center rounded-xl bg-slate-900 text-sm font-bold text-white" aria-hidden="true">
            {initials(partner.name)}
          </span>
          <ArrowUpRight className="h-5 w-5 text-slate-500 group-hover:text-brand-600" aria-hidden="true" />
        </span>
        <span className="mt-4 text-xs font-semibold uppercase tracking-wide text-brand-700">{partner.category}</span>
        <h3 className="mt-1 text-lg font-semibold text-slate-900">{partner.name}</h3>
        <span className="mt-2 text-sm text-slate-600">{partner.description}</span>
        <span className="sr-only">(opens in a new tab)</span>
      </ExternalLink>
    </li>
  );
}
