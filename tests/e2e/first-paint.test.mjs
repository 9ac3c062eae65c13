// First paint in one round trip (server/css/): each page
// carries the CSS its markup uses, inline, and loads the rest of the
// stylesheet without blocking its paint. Held here, in Chromium:
//
//   - nothing a page loads blocks its rendering (Chromium's own
//     `renderBlockingStatus` of every resource);
//   - a page's inline CSS alone styles every element as the whole
//     stylesheet does (every route, every post, the 404 and the error
//     page, at a phone's and a desktop's width, without JavaScript: the
//     stylesheet blocked, against the <noscript> link);
//   - past the first paint, applying the rest of the stylesheet (the
//     rules the inline CSS left out) restyles next to none of the page;
//   - a page reached by clicking a header or footer link from / or from a
//     post (client navigation) is styled as a fresh load of it is.
//
// Styles are compared as `getComputedStyle` gives them, every property of
// every element (custom properties aside: they paint only through the
// properties that use them, which are compared).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { hydrated, launchBrowser, onPages, startServer, TABLE_PATHS, watchConsole } from "./harness.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const POSTS = fs.readdirSync(path.join(root, "content", "blog")).filter((f) => f.endsWith(".md")).map((f) => `/blog/${f.slice(0, -3)}`);
const PHONE = { width: 390, height: 844 };
/** Putting the rest of the stylesheet in may restyle at most this
 *  fraction of a page's elements (1/RESTYLED_AT_MOST). */
const RESTYLED_AT_MOST = 10;
const DESKTOP = { width: 1280, height: 800 };

let server;
/** A server whose every render runs past its deadline: every page is the error page. */
let failing;
let browser;

before(async () => {
  [server, failing, browser] = await Promise.all([startServer(), startServer({ SSR_DEADLINE_MS: "1" }), launchBrowser()]);
});

after(async () => {
  await browser?.close();
  server?.stop();
  failing?.stop();
});

/** Every element's computed style in `page`, in document order: a tag
 *  path and, per property, its value. Animations are stopped at their
 *  start and nothing has focus, so two loads of one page compare equal. */
function styles(page) {
  return page.evaluate(() => {
    for (const a of document.getAnimations()) {
      a.pause();
      a.currentTime = 0;
    }
    document.activeElement?.blur?.();
    const unrendered = new Set(["LINK", "SCRIPT", "STYLE", "META", "TITLE", "TEMPLATE", "NOSCRIPT"]);
    // The property names once (every element has the same), then each
    // element's values in their order: one string to compare per element.
    const names = [...getComputedStyle(document.body)].filter((name) => !name.startsWith("--"));
    const rows = [];
    for (const el of document.body.querySelectorAll("*")) {
      if (unrendered.has(el.tagName)) continue;
      const cs = getComputedStyle(el);
      let where = el.tagName.toLowerCase();
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) where = `${p.tagName.toLowerCase()} > ${where}`;
      // A reference to an element by its id (an SVG gradient's, made by
      // React's useId) names the same element whoever rendered it.
      const values = names.map((n) => cs.getPropertyValue(n).replace(/url\("#[^"]*"\)/g, 'url("#id")'));
      rows.push({ where, classes: el.getAttribute("class") ?? "", values: values.join("\n") });
    }
    return { names, rows };
  });
}

/** The differences between two snapshots of one page, at most `limit`. */
function differences({ names, rows: a }, { rows: b }, limit = 8) {
  const found = [];
  if (a.length !== b.length) found.push(`${a.length} elements against ${b.length}`);
  for (let i = 0; i < Math.min(a.length, b.length) && found.length < limit; i++) {
    if (a[i].where !== b[i].where) {
      found.push(`element ${i}: ${a[i].where} against ${b[i].where}`);
      break;
    }
    if (a[i].values === b[i].values) continue;
    const [x, y] = [a[i].values.split("\n"), b[i].values.split("\n")];
    for (let k = 0; k < names.length && found.length < limit; k++) {
      if (x[k] !== y[k]) found.push(`${a[i].where} (class "${a[i].classes}"): ${names[k]} ${JSON.stringify(x[k])} against ${JSON.stringify(y[k])}`);
    }
  }
  return found;
}

/** Whether the whole stylesheet's rules are all in `page`'s stylesheets:
 *  as many style rules (counted as this browser reads them) as the whole
 *  stylesheet has on its own. */
async function stylesheetApplied(page) {
  const whole = await page.evaluate(() => document.querySelector("noscript").textContent.match(/href="([^"]+)"/)[1]);
  const text = await (await fetch(new URL(whole, page.url()))).text();
  return page.evaluate((text) => {
    const count = (group) => [...group.cssRules].reduce((n, r) => n + (r instanceof CSSStyleRule ? 1 : r.cssRules ? count(r) : 0), 0);
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(text);
    return [...document.styleSheets].some((s) => count(s) >= count(sheet));
  }, text);
}

/** A page with JavaScript off at `viewport`; with `onlyInline`, every
 *  stylesheet request fails, so the page has its inline CSS alone. */
async function noScriptPage(viewport, onlyInline) {
  const context = await browser.newContext({ viewport, javaScriptEnabled: false, reducedMotion: "reduce" });
  const page = await context.newPage();
  if (onlyInline) await page.route(/\.css(\?|$)/, (route) => route.abort());
  return page;
}

test("nothing a page loads blocks its first paint, and its inline CSS is allowed", async () => {
  const context = await browser.newContext({ viewport: PHONE });
  const problems = [];
  await onPages(
    async () => {
      const page = await context.newPage();
      problems.push(watchConsole(page));
      return page;
    },
    [...TABLE_PATHS, ...POSTS, "/no-such-page"],
    async (page, path) => {
      await page.goto(`${server.base}${path}`, { waitUntil: "networkidle" });
      const blocking = await page.evaluate(() =>
        performance
          .getEntriesByType("resource")
          .filter((r) => r.renderBlockingStatus === "blocking")
          .map((r) => r.name),
      );
      assert.deepEqual(blocking, [], `${path}: render-blocking requests`);
      // As served: one inline style, and no stylesheet linked in the head
      // but in <noscript>.
      const html = await (await fetch(`${server.base}${path}`)).text();
      const head = html.split("</head>")[0].replace(/<noscript>.*?<\/noscript>/g, "");
      assert.equal(head.match(/<style>/g)?.length, 1, path);
      assert.doesNotMatch(head, /<link rel="stylesheet"/, path);
      await hydrated(page);
      // Once hydrated, the rest of the stylesheet is applied.
      assert.ok(await stylesheetApplied(page), `${path}: the stylesheet is not applied`);
    },
    3,
  );
  await context.close();
  assert.deepEqual(problems.flat(), []);
});

/** What `page` requested before its first contentful paint: the names of
 *  the resources whose fetch started before it, and that paint's time. */
function requestedBeforePaint(page) {
  return page.evaluate(() => {
    const [paint] = performance.getEntriesByName("first-contentful-paint");
    const early = performance.getEntriesByType("resource").filter((r) => r.startTime < paint.startTime);
    return { paint: paint.startTime, early: early.map((r) => new URL(r.name).pathname) };
  });
}

test("a page's first paint shares the network with nothing of the app's: its modules and the rest of the stylesheet are asked for once it has painted", async () => {
  const context = await browser.newContext({ viewport: PHONE });
  const failures = [];
  await onPages(
    () => context.newPage(),
    [...TABLE_PATHS, ...POSTS, "/no-such-page"],
    async (page, path) => {
      await page.goto(`${server.base}${path}`, { waitUntil: "networkidle" });
      await hydrated(page);
      const boot = await page.evaluate(() => new URL(document.querySelector("script[data-modules]").src).pathname);
      const { paint, early } = await requestedBeforePaint(page);
      // The boot module itself is named by the HTML; what it asks for is not.
      const app = early.filter((p) => p !== boot && /\.(js|css)$/.test(p));
      if (app.length) failures.push(`${path}: before its first paint at ${Math.round(paint)} ms: ${app.join(", ")}`);
    },
    3,
  );
  await context.close();
  assert.deepEqual(failures, []);
});

/** Why Chromium restyles an element because of what a stylesheet holds
 *  (its `StyleRecalcInvalidationTracking` reasons): a rule added or
 *  changed, a property registered, keyframes. Not a node inserted, an
 *  animation or the page's own first styling. */
const SHEET_REASONS = new Set(["Style rule change", "Related style rule", "Style sheet change", "PropertyRegistration", "@keyframes rule change"]);

/** The restyles of elements in `page`, loading `path`, that a stylesheet
 *  caused once the rules of the rest of the stylesheet
 *  (`/assets/app-*.rules-*.json`) had arrived: putting them in, until the
 *  page hydrated. They are held until the page has painted and rendered
 *  two more frames: on a busy host the boot module may go on before the
 *  first paint (after its wait for it), and rules put in before anything
 *  is styled restyle nothing that was. */
async function restyledByTheRest(page, path) {
  await page.route(/\/assets\/app-[^/]*\.rules-[^/]*\.json$/, async (route) => {
    await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0);
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))));
    return route.fulfill({ response: await route.fetch() });
  });
  await browser.startTracing(page, {
    categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.invalidationTracking"],
  });
  await page.goto(`${server.base}${path}`, { waitUntil: "load" });
  await hydrated(page);
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents.sort((a, b) => a.ts - b.ts);
  const asked = events.find((e) => e.name === "ResourceSendRequest" && /\/assets\/app-[^/]*\.rules-[^/]*\.json$/.test(e.args?.data?.url ?? ""));
  assert.ok(asked, `${path}: the rules of the rest of the stylesheet were never asked for`);
  const arrived = events.find((e) => e.name === "ResourceFinish" && e.args?.data?.requestId === asked.args.data.requestId);
  assert.ok(arrived, `${path}: the rules of the rest of the stylesheet never arrived`);
  const restyles = events.filter((e) => e.name === "StyleRecalcInvalidationTracking" && e.ts > arrived.ts && SHEET_REASONS.has(e.args?.data?.reason));
  // What they were, should there be too many: reason and element.
  const why = {};
  for (const e of restyles) {
    const key = `${e.args.data.reason}: ${e.args.data.nodeName ?? "?"}`;
    why[key] = (why[key] ?? 0) + 1;
  }
  return { count: restyles.length, why: JSON.stringify(why) };
}

test("past its first paint, applying the rest of the stylesheet restyles next to none of a page's elements", async () => {
  // The whole stylesheet applied there restyled every element the page
  // had (on a phone's /, 548 of them, 25 to 80 ms on a 2-core host, more
  // on a phone: the one long task after the first paint, where
  // Lighthouse's Total Blocking Time was lost). The rest is the rules for
  // classes the page does not use, each inserted in its place in the
  // page's own CSS (server/css/rest.rs).
  const failures = [];
  for (const path of TABLE_PATHS) {
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const restyled = await restyledByTheRest(page, path);
    const all = await page.evaluate(() => document.getElementsByTagName("*").length);
    if (restyled.count > all / RESTYLED_AT_MOST) failures.push(`${path}: ${restyled.count} restyles of its ${all} elements for a stylesheet's rules when the rest of the stylesheet was put in (${restyled.why.slice(0, 300)})`);
    await context.close();
  }
  assert.deepEqual(failures, []);
});

test("a page hydrates where the browser does not report its paint, or reports none", async () => {
  // No Paint Timing (the next frame is waited for instead); a paint never
  // reported (the boot module goes on after its wait).
  const browsers = {
    "no Paint Timing": () => Object.defineProperty(PerformanceObserver, "supportedEntryTypes", { value: ["resource"] }),
    "no paint reported": () => (PerformanceObserver.prototype.observe = () => {}),
  };
  for (const [name, script] of Object.entries(browsers)) {
    const context = await browser.newContext({ viewport: PHONE });
    await context.addInitScript(script);
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.goto(`${server.base}/pricing`);
    await hydrated(page);
    assert.ok(await stylesheetApplied(page), `${name}: the stylesheet is not applied`);
    assert.deepEqual(problems, [], name);
    await context.close();
  }
});

/** A page's inline CSS alone against it with the whole stylesheet, at each
 *  width. `errorPage`: an error page ({ html, csp }) as the server sent it
 *  once, served with its Content-Security-Policy to both
 *  (a server whose every render is cut off at 1 ms may still finish one,
 *  which it then keeps), the whole stylesheet added to the second. */
async function inlineAloneMatches(base, paths, viewport, errorPage = null) {
  const [alone, whole] = [await noScriptPage(viewport, true), await noScriptPage(viewport, false)];
  const failures = [];
  try {
    for (const path of paths) {
      if (errorPage) {
        const answer = (body) => (route) =>
          route.fulfill({ status: 500, headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": errorPage.csp }, body });
        await alone.route(`${base}${path}`, answer(errorPage.html));
        // The error page has no <noscript> link: the stylesheet is added.
        const css = (await (await fetch(`${server.base}/`)).text()).match(/<noscript><link rel="stylesheet" href="([^"]+)"/)[1];
        await whole.route(`${base}${path}`, answer(errorPage.html.replace("</head>", `<link rel="stylesheet" href="${css}"></head>`)));
      }
      await alone.goto(`${base}${path}`, { waitUntil: "load" });
      await whole.goto(`${base}${path}`, { waitUntil: "load" });
      const sheets = await whole.evaluate(() => [...document.styleSheets].filter((s) => s.href).length);
      assert.equal(sheets, 1, `${path}: the whole stylesheet did not load`);
      const found = differences(await styles(alone), await styles(whole));
      if (found.length) failures.push(`${path} at ${viewport.width} px:\n    ${found.join("\n    ")}`);
    }
  } finally {
    await alone.context().close();
    await whole.context().close();
  }
  return failures;
}

test("every page's inline CSS alone styles it as the whole stylesheet does", async () => {
  const paths = [...TABLE_PATHS, ...POSTS, "/no-such-page"];
  const failures = (await Promise.all([PHONE, DESKTOP].map((v) => inlineAloneMatches(server.base, paths, v)))).flat();
  assert.deepEqual(failures, []);
});

test("the error page's inline CSS alone styles it as the whole stylesheet does", async () => {
  const res = await fetch(`${failing.base}/pricing`);
  assert.equal(res.status, 500);
  const html = await res.text();
  assert.ok(html.includes("<style>") && !html.includes("<script"), "the error page: inline CSS, no script");
  const failures = (await Promise.all([PHONE, DESKTOP].map((v) => inlineAloneMatches(failing.base, ["/pricing"], v, { html, csp: res.headers.get("content-security-policy") })))).flat();
  assert.deepEqual(failures, []);
});

test("a page reached by a header or footer link from / or a post is styled as a fresh load of it", async () => {
  // The page it leaves has its own inline CSS and its own rest of the
  // stylesheet (server/css/rest.rs); together they style the page reached
  // as the whole stylesheet does.
  const context = await browser.newContext({ viewport: DESKTOP, reducedMotion: "reduce" });
  const page = await context.newPage();
  const problems = watchConsole(page);
  const fresh = await context.newPage();
  const failures = [];
  for (const start of ["/", "/blog/nfc-integration"]) {
    await page.goto(`${server.base}${start}`, { waitUntil: "networkidle" });
    // The links to other pages of the site, in the header and the footer.
    const links = await page.evaluate(
      (start) =>
        [...document.querySelectorAll("header a[href^='/'], footer a[href^='/']")]
          .map((a) => a.getAttribute("href"))
          .filter((href, i, all) => href !== start && all.indexOf(href) === i),
      start,
    );
    assert.ok(links.length >= 8, `header and footer links of ${start}: ${links}`);
    for (const href of links) {
      await page.goto(`${server.base}${start}`, { waitUntil: "networkidle" });
      await hydrated(page);
      await page.evaluate(() => (window.__sameDocument = true));
      await page.locator(`header a[href="${href}"], footer a[href="${href}"]`).first().click();
      await page.waitForURL(`${server.base}${href}`);
      await page.waitForLoadState("networkidle");
      assert.equal(await page.evaluate(() => window.__sameDocument), true, `${start} to ${href}: not a client navigation`);
      await page.mouse.move(DESKTOP.width - 1, DESKTOP.height - 1);
      await fresh.goto(`${server.base}${href}`, { waitUntil: "networkidle" });
      await hydrated(fresh);
      await fresh.mouse.move(DESKTOP.width - 1, DESKTOP.height - 1);
      const found = differences(await styles(page), await styles(fresh));
      if (found.length) failures.push(`${start} to ${href}:\n    ${found.join("\n    ")}`);
    }
  }
  await context.close();
  assert.deepEqual(failures, []);
  assert.deepEqual(problems, []);
});

test("should the stylesheet not load, the page stays the server's and its links load whole pages", async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  let asked = 0;
  await page.route(/\/assets\/app-[^/]+\.(css|json)$/, (route) => {
    asked += 1;
    return route.abort();
  });
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  // The rules, tried again, then the whole stylesheet, tried again; then
  // no hydration: nothing the app shows could lack a rule.
  assert.equal(asked, 4, "the boot module's two tries of each");
  assert.equal(await page.evaluate(() => Object.keys(document.getElementById("root")).some((k) => k.startsWith("__reactContainer"))), false);
  await page.evaluate(() => (window.__sameDocument = true));
  await page.locator('header a[href="/pricing"]').first().click();
  await page.waitForURL(`${server.base}/pricing`);
  await page.getByRole("heading", { level: 1, name: "Pricing" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), undefined, "a whole page load");
  // That page is styled by its own inline CSS (the header's layout holds).
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector("header")).position), "sticky");
  await context.close();
});

test("where the browser read the inline CSS otherwise than the server wrote it, or its rules did not load, the whole stylesheet is applied after it", async () => {
  // The rules' places are wrong there (server/css/rest.rs): the boot module
  // finds the groups they name are not the page's, inserts nothing and
  // applies the whole stylesheet instead, then hydrates. So it does where
  // the file does not load.
  for (const answer of ["another count of groups", "no file"]) {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = watchConsole(page);
    await page.route(/\.rules-[^/]+\.json$/, async (route) => {
      if (answer === "no file") return route.fulfill({ status: 404 });
      const rules = await (await route.fetch()).json();
      return route.fulfill({ json: { ...rules, groups: rules.groups + 1 } });
    });
    await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
    await hydrated(page);
    const linked = await page.evaluate(() => [...document.querySelectorAll("head > link[rel=stylesheet]")].map((l) => new URL(l.href).pathname));
    assert.equal(linked.length, 1, `stylesheets linked: ${linked}`);
    assert.match(linked[0], /^\/assets\/app-[^/.]+\.css$/);
    assert.ok(await stylesheetApplied(page), `${answer}: the whole stylesheet is not applied`);
    await context.close();
    // The 404 the browser reports for the file it asked for.
    assert.deepEqual(problems.filter((p) => !(answer === "no file" && /404/.test(p))), [], answer);
  }
});

test("where style rules are grouping rules, as in Firefox, the rules are still put in their places", async () => {
  // Firefox's CSSStyleRule is a CSSGroupingRule (style rules nest): the
  // boot module numbers only the groups the server numbers.
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.addInitScript(() => Object.setPrototypeOf(CSSStyleRule.prototype, CSSGroupingRule.prototype));
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  await hydrated(page);
  assert.equal(await page.evaluate(() => document.createElement("style").sheet === null && CSSStyleRule.prototype instanceof CSSGroupingRule), true);
  assert.equal(await page.evaluate(() => document.querySelectorAll("head > link[rel=stylesheet]").length), 0, "the whole stylesheet was applied instead");
  assert.ok(await stylesheetApplied(page), "the rules are not all in");
  await context.close();
  assert.deepEqual(problems, []);
});
