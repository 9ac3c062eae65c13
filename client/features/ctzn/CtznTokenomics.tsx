import type { TokenAllocation } from "../../../content/site/types";

/** Segment colours by position (Tailwind only sees classes in client/). */
const COLOURS = ["bg-brand-600", "bg-emerald-500", "bg-amber-500", "bg-violet-500"];
/** The same colours for the bar's SVG segments. */
const FILLS = ["fill-brand-600", "fill-emerald-500", "fill-amber-500", "fill-violet-500"];

/** The allocation as one stacked bar (decorative) plus a readable list. */
export function CtznTokenomics({ allocations }: { allocations: TokenAllocation[] }) {
  return (
    <div>
      {/* SVG, so segment widths are attributes rather than inline styles
          (the site's Content-Security-Policy allows no inline style). */}
      <svg
        className="block h-6 w-full overflow-hidden rounded-full bg-slate-100"
        viewBox="0 0 100 1"
        preserveAspectRatio="none"
        aria-hidden="true"
        focusable="false"
      >
        {allocations.map((a, i) => {
          const x = allocations.slice(0, i).reduce((sum, b) => sum + b.percent, 0);
          return <rect key={a.label} x={x} y="0" width={a.percent} height="1" className={FILLS[i % FILLS.length]} />;
        })}
      </svg>
      <ul className="mt-8 grid gap-6 sm:grid-cols-2">
        {allocations.map((a, i) => (
          <li key={a.label} className="flex gap-4 rounded-2xl border border-slate-200 bg-white p-5">
            <span className={`mt-1.5 h-3 w-3 flex-none rounded-full ${COLOURS[i % COLOURS.length]}`} aria-hidden="true" />
            <div>
              <h3 className="flex items-baseline gap-3 text-lg font-semibold text-slate-900">
                {a.label}
                <span className="text-2xl font-bold text-slate-900">{`${a.percent}%`}</span>
              </h3>
              <p className="mt-1 text-sm text-slate-600">{a.description}</p>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
