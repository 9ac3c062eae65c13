import { ArrowUpRight, Quote } from "lucide-react";
import { ExternalLink } from "../../components/ExternalLink";
import { GradientFill } from "../../components/GradientFill";
import { PageHero } from "../../components/Bands";
import { Stars } from "./Stars";
import { COMMUNITY_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";
import {
  CHANNELS,
  CHANNELS_INTRO,
  COMMUNITY_INTRO,
  RESOURCES,
  RESOURCES_INTRO,
  TESTIMONIALS,
  TESTIMONIALS_INTRO,
} from "./content";
import type { Channel, Resource, Testimonial } from "../../../content/site/types";

export function meta(): PageMeta {
  return {
    title: "Join Our Community — Citizen Wallet",
    description:
      "Connect with Citizen Wallet on Discord, X and GitHub, find documentation, video tutorials, the community forum and webinars, and read what community organisers say.",
  };
}

export default function Community(_props: PageProps) {
  return (
    <>
      <PageHero title={COMMUNITY_INTRO.title} lead={COMMUNITY_INTRO.lead} />

      <section aria-labelledby="channels-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <SectionHeading id="channels-title" title={CHANNELS_INTRO.title} lead={CHANNELS_INTRO.lead} />
          <ul className="mt-12 grid gap-8 md:grid-cols-3">
            {CHANNELS.map((channel) => (
              <ChannelCard key={channel.name} channel={channel} />
            ))}
          </ul>
        </div>
      </section>

      <section aria-labelledby="resources-title" className="bg-slate-50 py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <SectionHeading id="resources-title" title={RESOURCES_INTRO.title} lead={RESOURCES_INTRO.lead} />
          <ul className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-4">
            {RESOURCES.map((resource) => (
              <ResourceCard key={resource.title} resource={resource} />
            ))}
          </ul>
        </div>
      </section>

      <section aria-labelledby="testimonials-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <SectionHeading id="testimonials-title" title={TESTIMONIALS_INTRO.title} />
          <ul className="mt-12 grid gap-8 md:grid-cols-3">
            {TESTIMONIALS.map((testimonial) => (
              <TestimonialCard key={testimonial.name} testimonial={testimonial} />
            ))}
          </ul>
        </div>
      </section>
    </>
  );
}

function SectionHeading({ id, title, lead }: { id: string; title: string; lead?: string }) {
  return (
    <div className="mx-auto max-w-3xl text-center">
      <h2 id={id} className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">{title}</h2>
      {lead && <p className="mt-4 text-lg text-slate-600">{lead}</p>}
    </div>
  );
}

function ChannelCard({ channel }: { channel: Channel }) {
  const Icon = COMMUNITY_ICONS[channel.icon];
  return (
    <li className="flex flex-col overflow-hidden rounded-2xl bg-white shadow-sm ring-1 ring-slate-200">
      <div className="relative isolate p-6 text-white">
        <GradientFill gradient={channel.gradient} diagonal />
        <Icon className="h-8 w-8" aria-hidden="true" />
        <h3 className="mt-4 text-2xl font-bold">{channel.name}</h3>
        <p className="text-sm text-white/90">{channel.kind}</p>
      </div>
      <div className="flex flex-1 flex-col p-6">
        <p className="flex-1 text-slate-600">{channel.description}</p>
        <p className="mt-4 font-semibold text-slate-900">{channel.members}</p>
        <ExternalLink
          href={channel.link}
          aria-label={`${CHANNELS_INTRO.buttonText} on ${channel.name} (opens in a new tab)`}
          className="mt-5 inline-flex items-center justify-center gap-2 rounded-lg bg-slate-900 px-5 py-3 font-semibold text-white hover:bg-slate-700"
        >
          {CHANNELS_INTRO.buttonText}
          <ArrowUpRight className="h-4 w-4" aria-hidden="true" />
        </ExternalLink>
      </div>
    </li>
  );
}

function ResourceCard({ resource }: { resource: Resource }) {
  const Icon = COMMUNITY_ICONS[resource.icon];
  return (
    <li className="flex flex-col rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
      <div className="flex items-start justify-between gap-3">
        <span className="flex h-12 w-12 items-center justify-center rounded-xl bg-brand-50 text-brand-600">
          <Icon className="h-6 w-6" aria-hidden="true" />
        </span>
        <span className="rounded-md bg-slate-100 px-2 py-1 text-xs font-medium text-slate-700">
          <span className="sr-only">Type: </span>
          {resource.type}
        </span>
      </div>
      <h3 className="mt-5 text-lg font-semibold text-slate-900">
        <a href={resource.link} className="hover:text-brand-700">{resource.title}</a>
      </h3>
      <p className="mt-2 flex-1 text-slate-600">{resource.description}</p>
      <button
        type="button"
        className="mt-5 rounded-lg border border-slate-300 px-4 py-2 font-semibold text-slate-800 hover:bg-slate-50"
      >
        {RESOURCES_INTRO.buttonText}
      </button>
    </li>
  );
}

function TestimonialCard({ testimonial }: { testimonial: Testimonial }) {
  return (
    <li>
      <figure className="flex h-full flex-col rounded-2xl bg-slate-50 p-8 ring-1 ring-slate-200">
        <Stars rating={testimonial.rating} />
        <Quote className="mt-5 h-6 w-6 text-brand-500" aria-hidden="true" />
        <blockquote className="mt-2 flex-1 text-lg text-slate-700">
          <p>{testimonial.content}</p>
        </blockquote>
        <figcaption className="mt-6">
          <p className="font-semibold text-slate-900">{testimonial.name}</p>
          <p className="text-sm text-slate-600">{testimonial.role}</p>
        </figcaption>
      </figure>
    </li>
  );
}
