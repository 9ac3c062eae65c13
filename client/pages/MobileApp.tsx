import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Mobile App — Citizen Wallet",
    description: "The Citizen Wallet app for iOS and Android: vouchers, QR codes and contacts for community payments.",
  };
}

export default function MobileApp(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Mobile App</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">The Citizen Wallet app for iOS and Android: vouchers, QR codes and contacts for community payments.</p>
    </section>
  );
}
