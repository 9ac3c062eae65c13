import { CircleX } from "lucide-react";
import { Link } from "react-router";
import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return {
    title: "Payment Cancelled — Citizen Wallet",
    description: "Your Citizen Wallet checkout was cancelled and no charge was made.",
  };
}

export default function Cancel(_props: PageProps) {
  return (
    <section className="flex min-h-[60vh] items-center justify-center bg-slate-50 px-4 py-16">
      <div className="w-full max-w-lg rounded-2xl border border-slate-200 bg-white p-8 text-center shadow-sm">
        <CircleX className="mx-auto h-14 w-14 text-slate-500" aria-hidden="true" />
        <h1 className="mt-6 text-3xl font-bold text-slate-900">Payment Cancelled</h1>
        <p className="mt-3 text-slate-600">
          Your checkout was cancelled and no charge was made. You can pick a plan again whenever you are ready, or ask
          us any question first.
        </p>
        <div className="mt-8 flex flex-col justify-center gap-3 sm:flex-row">
          <Link to="/pricing" className="rounded-lg bg-brand-600 px-5 py-2.5 text-sm font-semibold text-white hover:bg-brand-700">
            Back to Pricing
          </Link>
          <Link to="/contact" className="rounded-lg border border-slate-300 px-5 py-2.5 text-sm font-semibold text-slate-800 hover:bg-slate-50">
            Contact Us
          </Link>
        </div>
      </div>
    </section>
  );
}
