import { Check } from "lucide-react";
import type { Audience } from "../../../content/site/types";
import { NFC_ICONS } from "./icons";

/** One audience of the NFC wallet with its list of benefits. */
export function NfcAudienceCard({ audience }: { audience: Audience }) {
  const Icon = NFC_ICONS[audience.icon];
  const headingId = `audience-${audience.id}`;
  return (
    <article aria-labelledby={headingId} className="flex flex-col rounded-2xl border border-slate-200 bg-white p-8 shadow-sm">
      <span className="flex h-12 w-12 items-center justify-center rounded-xl bg-brand-50 text-brand-700">
        <Icon className="h-6 w-6" aria-hidden="true" />
      </span>
      <h3 id={headingId} className="mt-5 text-xl font-bold text-slate-900">{audience.title}</h3>
      <p className="mt-2 text-slate-600">{audience.intro}</p>
      <ul className="mt-6 space-y-3">
        {audience.benefits.map((benefit) => (
          <li key={benefit} className="flex items-start gap-3 text-sm text-slate-700">
            <Check className="mt-0.5 h-5 w-5 flex-none text-emerald-600" aria-hidden="true" />
            {benefit}
          </li>
        ))}
      </ul>
    </article>
  );
}
