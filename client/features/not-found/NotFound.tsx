import { Link } from "react-router";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return { title: "Page not found — Citizen Wallet", description: "This page does not exist." };
}

export default function NotFound(_props: PageProps) {
  return (
    <section className="flex min-h-[60vh] items-center justify-center bg-slate-50 px-4">
      <div className="text-center">
        <h1 className="mb-4 text-4xl font-bold">404</h1>
        <p className="mb-4 text-xl text-slate-600">Oops! Page not found</p>
        <Link to="/" className="text-brand-700 underline hover:text-brand-600">Return to Home</Link>
      </div>
    </section>
  );
}
