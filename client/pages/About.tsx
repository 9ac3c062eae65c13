import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "About — Citizen Wallet",
    description: "Our mission, values, team and journey building wallets for community currencies.",
  };
}

export default function About(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">About</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Our mission, values, team and journey building wallets for community currencies.</p>
    </section>
  );
}
