import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Privacy Policy — Citizen Wallet",
    description: "How Citizen Wallet handles personal data.",
  };
}

export default function Privacy(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Privacy Policy</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">How Citizen Wallet handles personal data.</p>
    </section>
  );
}
