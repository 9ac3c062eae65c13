import { useId } from "react";
import type { Gradient } from "../../content/site/types";

/**
 * A gradient background drawn as SVG. Its colours are SVG attributes, not a
 * `style` attribute, so pages need no inline styles under the site's
 * Content-Security-Policy (`style-src 'self'`). It fills its nearest
 * positioned ancestor, behind that ancestor's content: give the parent
 * `relative isolate`.
 */
export function GradientFill({ gradient, diagonal = false }: { gradient: Gradient; diagonal?: boolean }) {
  // useId is the same on the server and in the browser; keep it to
  // characters a url(#...) reference takes as they are.
  const id = `gradient-${useId().replace(/[^A-Za-z0-9_-]/g, "")}`;
  return (
    <svg
      aria-hidden="true"
      focusable="false"
      className="absolute inset-0 -z-10 h-full w-full"
      viewBox="0 0 1 1"
      preserveAspectRatio="none"
    >
      <defs>
        <linearGradient id={id} x1="0" y1="0" x2="1" y2={diagonal ? "1" : "0"}>
          <stop offset="0" stopColor={gradient.from} />
          <stop offset="1" stopColor={gradient.to} />
        </linearGradient>
      </defs>
      <rect width="1" height="1" fill={`url(#${id})`} />
    </svg>
  );
}
