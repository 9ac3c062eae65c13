import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "CTZN Token — Citizen Wallet",
    description: "CTZN, the token that funds Citizen Wallet: figures, tokenomics and the funding programme.",
  };
}

export default function Ctzn(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">CTZN Token</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">CTZN, the token that funds Citizen Wallet: figures, tokenomics and the funding programme.</p>
    </section>
  );
}
