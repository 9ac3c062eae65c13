import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Our Services — Citizen Wallet",
    description: "Custom wallet setup, integrations, smart contracts, onboarding, audits and support for community currency projects.",
  };
}

export default function Services(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Our Services</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Custom wallet setup, integrations, smart contracts, onboarding, audits and support for community currency projects.</p>
    </section>
  );
}
