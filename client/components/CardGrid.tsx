import type { ReactNode } from "react";

/** The four-column grid of cards: About's values and partners, CTZN's
 *  funding steps. */
export const CARD_GRID = "mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-4";

export function CardGrid({ as: List = "ul", children }: { as?: "ul" | "ol"; children: ReactNode }) {
  return <List className={CARD_GRID}>{children}</List>;
}
