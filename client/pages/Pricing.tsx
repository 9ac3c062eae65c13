import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Pricing — Citizen Wallet",
    description: "Hosted plans for community currencies, billed monthly or yearly, or self-host for free.",
  };
}

export default function Pricing(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Pricing</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Hosted plans for community currencies, billed monthly or yearly, or self-host for free.</p>
    </section>
  );
}
