import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Discord Wallet — Citizen Wallet",
    description: "A wallet bot for Discord communities: send and check community tokens right from chat.",
  };
}

export default function DiscordWallet(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Discord Wallet</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">A wallet bot for Discord communities: send and check community tokens right from chat.</p>
    </section>
  );
}
