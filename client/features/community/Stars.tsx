import { Star } from "lucide-react";

/** A star rating read out as one phrase ("Rated 5 out of 5"). */
export function Stars({ rating, max = 5, className = "" }: { rating: number; max?: number; className?: string }) {
  return (
    <div role="img" aria-label={`Rated ${rating} out of ${max}`} className={`flex items-center gap-0.5 ${className}`}>
      {Array.from({ length: max }, (_, i) => (
        <Star
          key={i}
          aria-hidden="true"
          className={i < rating ? "h-5 w-5 fill-amber-400 text-amber-400" : "h-5 w-5 fill-slate-200 text-slate-200"}
        />
      ))}
    </div>
  );
}
