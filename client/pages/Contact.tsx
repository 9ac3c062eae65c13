import type { PageMeta, PageProps } from "../lib/types";

export function meta(): PageMeta {
  return {
    title: "Contact — Citizen Wallet",
    description: "Tell us about your community and we will get back to you.",
  };
}

export default function Contact(_props: PageProps) {
  return (
    <section className="mx-auto max-w-7xl px-4 py-16 sm:px-6 lg:px-8">
      <h1 className="text-4xl font-bold tracking-tight">Request an Intro</h1>
      <p className="mt-4 max-w-2xl text-lg text-slate-600">Tell us about your community and we will get back to you.</p>
    </section>
  );
}
