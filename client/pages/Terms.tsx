import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Terms of Service — Citizen Wallet",
    description: "The terms for using Citizen Wallet's website and services.",
  };
}

export default function Terms(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Terms of Service</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">The terms for using Citizen Wallet's website and services.</p>
    </section>
  );
}
