import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Our Wallets — Citizen Wallet",
    description: "Mobile, web burner, NFC and Discord wallets for community currencies, and the communities that already use them.",
  };
}

export default function Wallets(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Our Wallets</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Mobile, web burner, NFC and Discord wallets for community currencies, and the communities that already use them.</p>
    </section>
  );
}
