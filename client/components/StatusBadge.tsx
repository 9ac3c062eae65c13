import type { Status } from "../../content/site/types";

/** Spec section 1: Live is green, Beta yellow, Coming blue. */
const STYLES: Record<Status, string> = {
  Live: "bg-green-100 text-green-800 ring-green-600/20",
  Beta: "bg-yellow-100 text-yellow-800 ring-yellow-600/30",
  Coming: "bg-blue-100 text-blue-800 ring-blue-600/20",
};

const DOTS: Record<Status, string> = {
  Live: "bg-green-600",
  Beta: "bg-yellow-500",
  Coming: "bg-blue-600",
};

export function StatusBadge({ status, className = "" }: { status: Status; className?: string }) {
  return (
    <span className={`inline-flex items-center gap-1.5 rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${STYLES[status]} ${className}`}>
      <span className={`h-1.5 w-1.5 rounded-full ${DOTS[status]}`} aria-hidden="true" />
      {status}
    </span>
  );
}
