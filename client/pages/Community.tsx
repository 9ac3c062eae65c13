import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Community — Citizen Wallet",
    description: "Connect with the people building and using community currencies: chat, social channels, code and resources.",
  };
}

export default function Community(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Join Our Community</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Connect with the people building and using community currencies: chat, social channels, code and resources.</p>
    </section>
  );
}
