import { Check, Clock } from "lucide-react";
import { Link } from "react-router";
import { PageHero } from "../../components/Bands";
import { SERVICES_ICONS } from "./icons";
import type { PageMeta, PageProps } from "../../lib/types";
import {
  PACKAGES,
  POPULAR_BADGE,
  SERVICES,
  SERVICES_CONTACT_PATH,
  SERVICES_INTRO,
} from "./content";
import type { Service, ServicePackage } from "../../../content/site/types";

export function meta(): PageMeta {
  return {
    title: "Our Services — Citizen Wallet",
    description:
      "Custom wallet setup, API integration, smart contract development, community onboarding, security audits and premium support for community currencies, plus Starter, Professional and Enterprise packages.",
  };
}

export default function Services(_props: PageProps) {
  return (
    <>
      <PageHero title={SERVICES_INTRO.title} lead={SERVICES_INTRO.lead} />

      <section aria-labelledby="services-title" className="bg-white py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="services-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">
              Individual Services
            </h2>
            <p className="mt-4 text-lg text-slate-600">Pick exactly the help you need, priced and scheduled up front.</p>
          </div>
          <ul className="mt-14 grid gap-6 md:grid-cols-2 lg:grid-cols-3">
            {SERVICES.map((service) => (
              <ServiceCard key={service.title} service={service} />
            ))}
          </ul>
        </div>
      </section>

      <section aria-labelledby="packages-title" className="bg-slate-50 py-20">
        <div className="mx-auto max-w-7xl px-4 sm:px-6 lg:px-8">
          <div className="mx-auto max-w-3xl text-center">
            <h2 id="packages-title" className="text-3xl font-bold tracking-tight text-slate-900 sm:text-4xl">
              Service Packages
            </h2>
            <p className="mt-4 text-lg text-slate-600">Bundles that combine our services for a complete launch.</p>
          </div>
          <ul className="mt-14 grid items-stretch gap-8 lg:grid-cols-3">
            {PACKAGES.map((pkg) => (
              <PackageCard key={pkg.name} pkg={pkg} />
            ))}
          </ul>
        </div>
      </section>
    </>
  );
}

function ServiceCard({ service }: { service: Service }) {
  const Icon = SERVICES_ICONS[service.icon];
  return (
    <li className="flex flex-col rounded-2xl border border-slate-200 bg-white p-6 shadow-sm transition hover:shadow-md">
      <span className="flex h-12 w-12 items-center justify-center rounded-xl bg-brand-50 text-brand-600">
        <Icon className="h-6 w-6" aria-hidden="true" />
      </span>
      <h3 className="mt-5 text-xl font-semibold text-slate-900">{service.title}</h3>
      <p className="mt-2 text-slate-600">{service.description}</p>
      <ul className="mt-5 flex-1 space-y-2">
        {service.features.map((feature) => (
          <li key={feature} className="flex items-start gap-2 text-sm text-slate-700">
            <Check className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" aria-hidden="true" />
            {feature}
          </li>
        ))}
      </ul>
      <dl className="mt-6 flex items-end justify-between gap-4 border-t border-slate-100 pt-5">
        <div>
          <dt className="sr-only">Price</dt>
          <dd className="text-lg font-bold text-slate-900">{service.price}</dd>
        </div>
        <div>
          <dt className="sr-only">Timeline</dt>
          <dd className="flex items-center gap-1.5 text-sm text-slate-600">
            <Clock className="h-4 w-4" aria-hidden="true" />
            {service.timeline}
          </dd>
        </div>
      </dl>
    </li>
  );
}

function PackageCard({ pkg }: { pkg: ServicePackage }) {
  return (
    <li
      className={`relative flex flex-col rounded-2xl bg-white p-8 shadow-sm ${
        pkg.popular ? "ring-2 ring-brand-600 lg:-mt-4 lg:mb-4 lg:shadow-xl" : "ring-1 ring-slate-200"
      }`}
    >
      {pkg.popular && (
        <p className="absolute -top-3 left-1/2 -translate-x-1/2 rounded-full bg-brand-600 px-3 py-1 text-xs font-semibold text-white">
          {POPULAR_BADGE}
        </p>
      )}
      <h3 className="text-xl font-semibold text-slate-900">{pkg.name}</h3>
      <p className="mt-2 text-slate-600">{pkg.description}</p>
      <p className="mt-6 text-4xl font-bold tracking-tight text-slate-900">{pkg.price}</p>
      <ul className="mt-6 flex-1 space-y-3">
        {pkg.features.map((feature) => (
          <li key={feature} className="flex items-start gap-2 text-slate-700">
            <Check className="mt-0.5 h-5 w-5 shrink-0 text-emerald-600" aria-hidden="true" />
            {feature}
          </li>
        ))}
      </ul>
      <Link
        to={SERVICES_CONTACT_PATH}
        className={`mt-8 inline-flex items-center justify-center rounded-lg px-5 py-3 font-semibold ${
          pkg.popular ? "bg-brand-600 text-white hover:bg-brand-700" : "bg-slate-900 text-white hover:bg-slate-700"
        }`}
      >
        {pkg.buttonText}
      </Link>
    </li>
  );
}
