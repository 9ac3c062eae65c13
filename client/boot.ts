// The one module a page's HTML names. The page is server-rendered and works
// before any script runs, so the app's modules are fetched only once the
// page has painted: the first paint shares the network with nothing but
// its own HTML (and its first image, preloaded from the head). The server
// lists the modules the page needs in `data-modules`, the entry first; all
// of them are requested at once (modulepreload), then the entry is
// imported and hydrates.
//
// The page paints with the CSS its own markup uses, inline in its head.
// The rest of the stylesheet (`data-css`, server/css/rest.rs: each rule
// that CSS left out, with its place there) is requested here with the
// modules, not preloaded from the head, where it would share the network
// with the first paint, and each of its rules is inserted in its place:
// the page's stylesheet becomes the whole one, in its order, and the
// browser restyles only what the rules inserted can match, next to none
// of the page's elements. Where the browser read the inline CSS otherwise
// than the server wrote it (the places would be wrong), the whole
// stylesheet (`data-stylesheet`) is applied after it instead. The app
// hydrates only once either is in: anything it then shows (a menu opened,
// a page reached by client navigation) has every rule it needs.
// Should neither load, twice, the page is left as the server made it,
// which works without scripts: its links load whole pages, each with its
// own CSS.
const boot = document.querySelector<HTMLElement>("[data-modules]")!.dataset;
const [entry, ...chunks] = boot.modules!.split(" ");

/** Once the page has painted its content: its first contentful paint
 *  (Paint Timing), or the next frame where the browser does not report it.
 *  A page that is not being shown (a tab in the background, a prerender)
 *  paints nothing meanwhile, so it goes on at once; and whatever happens,
 *  after PAINT_WAIT_MS. */
const PAINT_WAIT_MS = 2000;
const painted = () =>
  new Promise<void>((done) => {
    if (document.visibilityState !== "visible") return done();
    document.addEventListener("visibilitychange", () => done(), { once: true });
    setTimeout(done, PAINT_WAIT_MS);
    if (!PerformanceObserver.supportedEntryTypes?.includes("paint")) {
      requestAnimationFrame(() => setTimeout(done));
      return;
    }
    new PerformanceObserver((list, observer) => {
      if (!list.getEntriesByName("first-contentful-paint").length) return;
      observer.disconnect();
      done();
    }).observe({ type: "paint", buffered: true });
  });

/** Appends the stylesheet at `href`; whether it loaded. */
const applied = (href: string) =>
  new Promise<boolean>((done) => {
    const sheet = Object.assign(document.createElement("link"), { rel: "stylesheet", href });
    sheet.addEventListener("load", () => done(true));
    sheet.addEventListener("error", () => {
      sheet.remove();
      done(false);
    });
    document.head.append(sheet);
  });

/** The rest of the stylesheet as the server sends it (server/css/rest.rs):
 *  how many groups the inline CSS has (the sheet itself the first, then
 *  its grouping rules depth first), how many rules each group added to
 *  holds, and each rule left out with its group and its index there. */
interface Rest {
  groups: number;
  lengths: [number, number][];
  rules: [number, number, string][];
}

/** The rest at `href`, or null where it did not load. */
const fetched = async (href: string) => {
  try {
    const res = await fetch(href);
    return res.ok ? ((await res.json()) as Rest) : null;
  } catch {
    return null;
  }
};

/** Inserts each rule of `rest` in its place in the page's inline CSS;
 *  whether the inline CSS is as the server wrote it, so that it could. */
const inserted = (rest: Rest) => {
  const inline = document.head.querySelector("style")?.sheet;
  if (!inline) return false;
  const groups: (CSSStyleSheet | CSSGroupingRule)[] = [];
  const walk = (group: CSSStyleSheet | CSSGroupingRule) => {
    groups.push(group);
    for (const rule of group.cssRules) if (rule instanceof CSSGroupingRule) walk(rule);
  };
  walk(inline);
  if (groups.length !== rest.groups || !rest.lengths.every(([g, n]) => groups[g].cssRules.length === n)) return false;
  // A rule this browser cannot read it drops, as it would from the whole
  // stylesheet: the rules after it in its group move up one. Any other
  // refusal leaves the rest to the whole stylesheet, applied after.
  const dropped = new Map<number, number>();
  for (const [g, at, text] of rest.rules) {
    try {
      groups[g].insertRule(text, at - (dropped.get(g) ?? 0));
    } catch (error) {
      if (!(error instanceof DOMException && error.name === "SyntaxError")) return false;
      dropped.set(g, (dropped.get(g) ?? 0) + 1);
    }
  }
  return true;
};

await painted();
for (const href of [entry, ...chunks]) document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
const rest = boot.css ? ((await fetched(boot.css)) ?? (await fetched(boot.css))) : null;
const whole = boot.stylesheet;
if (!boot.css || (rest && inserted(rest)) || (rest && whole && ((await applied(whole)) || (await applied(whole))))) import(entry);

export {};
