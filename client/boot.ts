// The one module a page's HTML names. The page is server-rendered and works
// before any script runs, so the app's modules are fetched only once the
// page has painted: the first paint shares the network with nothing but
// its own HTML (and its first image, preloaded from the head). The server
// lists the modules the page needs in `data-modules`, the entry first; all
// of them are requested at once (modulepreload), then the entry is
// imported and hydrates.
//
// The page paints with the CSS its own markup uses, inline in its head; the
// whole stylesheet (`data-css`) is requested here with the modules, not
// preloaded from the head, where it would share the network with the first
// paint. The app hydrates only once it has been applied: anything the app
// then shows (a menu opened, a page reached by client navigation) has every
// rule it needs.
// Should the stylesheet not load, twice, the page is left as the server
// made it, which works without scripts: its links load whole pages, each
// with its own CSS.
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

await painted();
for (const href of [entry, ...chunks]) document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
const css = boot.css;
if (!css || (await applied(css)) || (await applied(css))) import(entry);

export {};
