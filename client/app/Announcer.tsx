/**
 * The page's one polite live region for what a client-side navigation did:
 * a new page's title, or what a new view of the same page shows. It is in
 * the server's HTML from the first render, so a screen reader is already
 * listening when the first change is written into it.
 */
export function Announcer({ message }: { message: string }) {
  return (
    <div id="route-announcer" role="status" aria-live="polite" aria-atomic="true" className="sr-only">
      {message}
    </div>
  );
}

/** The next message for the region: the same words again differ by a
 *  trailing no-break space, so a repeat is a change and is read. */
export function nextMessage(previous: string, text: string): string {
  return previous === text ? `${text}\u00a0` : text;
}

/**
 * Where focus goes on a new page: the element the URL's hash names, else
 * the page's main heading, else `main`. It becomes focusable for this once
 * (tabindex -1, removed when focus leaves), so Tab goes on from there into
 * the page and a click on the heading later does not focus it.
 */
export function focusArrival(hash: string) {
  const named = hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null;
  const target = named ?? document.querySelector<HTMLElement>("main h1") ?? document.getElementById("main");
  if (!target) return;
  if (!target.hasAttribute("tabindex")) {
    target.setAttribute("tabindex", "-1");
    target.addEventListener("blur", () => target.removeAttribute("tabindex"), { once: true });
  }
  // A new page has scrolled to its top already; a named place scrolls into
  // view (below the sticky header: the stylesheet's scroll-padding).
  target.focus({ preventScroll: named === null });
}
