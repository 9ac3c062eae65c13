import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Citizen Wallet — wallets for community currencies",
    description: "Send, receive and spend community tokens without gas fees or seed phrases: mobile, web, NFC and Discord wallets for local currencies and community tokens.",
  };
}

export default function Home(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">The wallet for your community currency</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Send, receive and spend community tokens without gas fees or seed phrases: mobile, web, NFC and Discord wallets for local currencies and community tokens.</p>
    </section>
  );
}
