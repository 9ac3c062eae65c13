// The two grids several pages share: the icon cards (an icon in a badge, a
// title and a text) and the four-column card grid. One module, so a page
// that uses both loads one chunk for them.
import type { ReactNode } from "react";

/** One entry: its icon (drawn by the page, from its own icon set), a title
 *  and a line of text. */
export interface IconCard {
  key: string;
  icon: ReactNode;
  title: ReactNode;
  text: ReactNode;
}

/** How a page lays its entries out: the classes of the list, each entry,
 *  the icon's badge, the title and the text (the card's own when left
 *  out); `beside` puts the words next to the badge instead of under it. */
export interface IconCardsLook {
  list: string;
  item: string;
  badge: string;
  title?: string;
  text?: string;
  beside?: boolean;
}

const TITLE = "mt-4 text-lg font-semibold text-slate-900";
const TEXT = "mt-2 text-slate-600";

/** A list of entries, each an icon in a badge with a title and a text: the
 *  feature grids of the Discord, mobile and NFC wallet pages, About's
 *  values and CTZN's funding steps. */
export function IconCards({ as: List = "ul", look, items }: { as?: "ul" | "ol"; look: IconCardsLook; items: IconCard[] }) {
  return (
    <List className={look.list}>
      {items.map((item) => {
        const words = (
          <>
            <h3 className={look.title ?? TITLE}>{item.title}</h3>
            <p className={look.text ?? TEXT}>{item.text}</p>
          </>
        );
        return (
          <li key={item.key} className={look.item}>
            <span className={look.badge}>{item.icon}</span>
            {look.beside ? <div>{words}</div> : words}
          </li>
        );
      })}
    </List>
  );
}

/** The four-column grid of cards: About's values and partners, CTZN's
 *  funding steps. */
export const CARD_GRID = "mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-4";

export function CardGrid({ as: List = "ul", children }: { as?: "ul" | "ol"; children: ReactNode }) {
  return <List className={CARD_GRID}>{children}</List>;
}
