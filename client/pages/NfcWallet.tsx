import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "NFC Wallet — Citizen Wallet",
    description: "Tap-to-pay NFC cards for community currencies at events, markets and local shops.",
  };
}

export default function NfcWallet(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">NFC Wallet</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Tap-to-pay NFC cards for community currencies at events, markets and local shops.</p>
    </section>
  );
}
