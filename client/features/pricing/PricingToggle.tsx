import { Link } from "react-router";
import { BILLING_OPTIONS } from "./content";
import type { Billing } from "../../../content/site/types";

/**
 * The monthly/yearly switch. Each side is a real link (`?billing=...`), so it
 * works without JavaScript: the server renders the chosen view. With
 * JavaScript it is a client-side navigation that keeps the scroll position;
 * the page keeps its prices on screen meanwhile.
 */
export function PricingToggle({ value }: { value: Billing }) {
  return (
    <nav aria-label="Billing period" className="inline-flex rounded-full border border-slate-200 bg-white p-1 shadow-sm">
      {BILLING_OPTIONS.map((option) => {
        const active = option.value === value;
        return (
          <Link
            key={option.value}
            to={`?billing=${option.value}`}
            replace
            preventScrollReset
            aria-current={active ? "page" : undefined}
            className={`rounded-full px-5 py-2 text-sm font-semibold transition-colors ${
              active ? "bg-brand-600 text-white shadow" : "text-slate-700 hover:bg-slate-100 hover:text-slate-900"
            }`}
          >
            {option.label}
          </Link>
        );
      })}
    </nav>
  );
}
