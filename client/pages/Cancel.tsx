import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Payment cancelled — Citizen Wallet",
    description: "Your checkout was cancelled and no charge was made.",
  };
}

export default function Cancel(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Payment Cancelled</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Your checkout was cancelled and no charge was made.</p>
    </section>
  );
}
