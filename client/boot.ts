// The one module a page's HTML names. The page is server-rendered and works
// before any script runs, so the app's modules are fetched only once the
// page has painted: the first paint shares the network with nothing but
// its own HTML (and its first image, preloaded from the head). The server
// lists the modules the page needs in `data-modules`, the entry first; all
// of them are requested at once (modulepreload), then the entry is
// imported and hydrates.
//
// The page paints with the CSS its own markup uses, inline in its head.
// The rest of the stylesheet is the rules that CSS left out: the build's
// file of every rule a page may leave out with its place (`data-css`,
// server/css/rest.rs) is requested here with the modules, not preloaded
// from the head, where it would share the network with the first paint,
// and each rule the page did not keep (`data-kept`) is inserted in its
// place. The page's stylesheet becomes the whole one, in its order, and
// the browser restyles only what the rules inserted can match, next to
// none of the page's elements. Where that cannot be done (the file did not
// load, or the browser read the inline CSS otherwise than the server
// wrote it, so the places would be wrong), the whole stylesheet
// (`data-stylesheet`) is applied after it instead. The app hydrates only
// once either is in: anything it then shows (a menu opened, a page reached
// by client navigation) has every rule it needs. Should neither load,
// twice, the page is left as the server made it, which works without
// scripts: its links load whole pages, each with its own CSS.
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

/** The rules a page may leave out, as the server sends them
 *  (server/css/rest.rs): how many groups the stylesheet has (the sheet
 *  itself the first, then its groups depth first), how many rules each
 *  group holding one of them has in the whole stylesheet, and each rule by
 *  its number, with its group and its index there. */
interface Rules {
  groups: number;
  lengths: [number, number][];
  rules: [number, number, string][];
}

/** The groups, as the server counts them: not every CSSGroupingRule (a
 *  style rule is one in Firefox, where rules nest, and so are `@page` and
 *  `@scope`, which the server counts as rules). */
const GROUPS = [globalThis.CSSMediaRule, globalThis.CSSSupportsRule, globalThis.CSSLayerBlockRule, globalThis.CSSContainerRule, globalThis.CSSStartingStyleRule].filter(Boolean);

/** The file at `href`, or null where it did not load. */
const fetched = async (href: string) => {
  try {
    const res = await fetch(href);
    return res.ok ? ((await res.json()) as Rules) : null;
  } catch {
    return null;
  }
};

/** Whether the page kept rule `n`, by `kept`: a bit per rule, base64url. */
const keeps = (kept: string) => {
  const bytes = atob(kept.replace(/-/g, "+").replace(/_/g, "/"));
  return (n: number) => ((bytes.charCodeAt(n >> 3) >> (n & 7)) & 1) === 1;
};

/** Inserts each rule of `file` the page did not keep in its place in the
 *  page's inline CSS; whether the inline CSS is as the server wrote it, so
 *  that it could. */
const inserted = (file: Rules, kept: string) => {
  try {
    const inline = document.head.querySelector("style")?.sheet;
    if (!inline) return false;
    const keep = keeps(kept);
    const groups: (CSSStyleSheet | CSSGroupingRule)[] = [];
    const walk = (group: CSSStyleSheet | CSSGroupingRule) => {
      groups.push(group);
      for (const rule of group.cssRules) if (GROUPS.some((kind) => rule instanceof kind)) walk(rule as CSSGroupingRule);
    };
    walk(inline);
    const missing = new Map<number, number>();
    file.rules.forEach(([g], n) => keep(n) || missing.set(g, (missing.get(g) ?? 0) + 1));
    if (groups.length !== file.groups || !file.lengths.every(([g, n]) => groups[g].cssRules.length === n - (missing.get(g) ?? 0))) return false;
    // A rule this browser cannot read it drops, as it would from the whole
    // stylesheet: the rules after it in its group move up one. Any other
    // refusal leaves the rest to the whole stylesheet, applied after.
    const dropped = new Map<number, number>();
    for (const [n, [g, at, text]] of file.rules.entries()) {
      if (keep(n)) continue;
      try {
        groups[g].insertRule(text, at - (dropped.get(g) ?? 0));
      } catch (error) {
        if (!(error instanceof DOMException && error.name === "SyntaxError")) return false;
        dropped.set(g, (dropped.get(g) ?? 0) + 1);
      }
    }
    return true;
  } catch {
    return false;
  }
};

await painted();
for (const href of [entry, ...chunks]) document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
const file = boot.css ? ((await fetched(boot.css)) ?? (await fetched(boot.css))) : null;
const whole = boot.stylesheet;
if (!boot.css || (file && inserted(file, boot.kept ?? "")) || (whole && ((await applied(whole)) || (await applied(whole))))) import(entry);

export {};
