import type { AnchorHTMLAttributes } from "react";

/** A link that leaves the site: always a new tab (spec section 7), without
 *  handing the opener to the other site. */
export function ExternalLink(props: Omit<AnchorHTMLAttributes<HTMLAnchorElement>, "target" | "rel"> & { href: string }) {
  return <a {...props} target="_blank" rel="noopener noreferrer" />;
}
