import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Blog — Citizen Wallet",
    description: "News, features, events and partnerships from the Citizen Wallet team.",
  };
}

export default function Blog(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Blog</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">News, features, events and partnerships from the Citizen Wallet team.</p>
    </section>
  );
}
