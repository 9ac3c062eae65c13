import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { TABLE_PATHS, hydrated, launchBrowser, onPages, startServer, watchConsole, watchedPages } from "./harness.mjs";

let server;
let browser;

// Every route of the table (a new one is checked without an edit here),
// and the payment page with a session.
const ROUTES = [...TABLE_PATHS, "/success?session_id=cs_test_1"];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("every route hydrates under the security headers without warnings or CSP violations, and every external link opens in a new tab", async () => {
  const pages = watchedPages(() => browser.newPage({ viewport: { width: 1280, height: 800 } }));
  await onPages(pages.newPage, ROUTES, async (page, path) => {
    const res = await page.goto(`${server.base}${path}`, { waitUntil: "networkidle" });
    const csp = res.headers()["content-security-policy"] ?? "";
    assert.ok(csp.includes("script-src 'self'") && csp.includes("frame-ancestors 'none'"), `${path}: served without its policy`);
    // Hydrated: React attached its handlers (the page's script ran under the policy).
    await hydrated(page);
    const bad = await page.$$eval('a[href^="http"]', (as) =>
      as.filter((a) => a.target !== "_blank" || !a.rel.includes("noopener")).map((a) => a.outerHTML.slice(0, 120)),
    );
    assert.deepEqual(bad, [], `${path}: external links without a new tab`);
    assert.equal(await page.locator("h1").count(), 1, `${path}: one h1`);
  });
  assert.deepEqual(pages.problems(), []);
});

test("blog filter works client-side and as plain links without JavaScript", async () => {
  const page = await browser.newPage();
  const problems = watchConsole(page);
  await page.goto(`${server.base}/blog`, { waitUntil: "networkidle" });
  await page.evaluate(() => { window.__sameDocument = true; });
  const filters = page.getByRole("navigation", { name: "Filter posts by type" });
  await filters.getByRole("link", { name: "Events" }).click();
  await page.waitForURL(`${server.base}/blog?type=Events`);
  await page.getByRole("heading", { name: "Events Posts (1)" }).waitFor();
  assert.equal(await filters.getByRole("link", { name: "Events" }).getAttribute("aria-current"), "page");
  await filters.getByRole("link", { name: "Feature" }).click();
  await page.getByText("Only one post available in this category (shown above as featured)").waitFor();
  await filters.getByRole("link", { name: "All" }).click();
  await page.getByRole("heading", { name: "Latest Posts (5)" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "filtered without a reload");

  // Open a post and come back.
  await page.getByRole("link", { name: "Read Full Article" }).click();
  await page.getByRole("link", { name: "Back to Blog" }).waitFor();
  assert.match(page.url(), /\/blog\/brussels-pay-launch$/);
  assert.deepEqual(problems, []);
  await page.close();

  const context = await browser.newContext({ javaScriptEnabled: false });
  const noJs = await context.newPage();
  await noJs.goto(`${server.base}/blog`);
  await noJs.getByRole("navigation", { name: "Filter posts by type" }).getByRole("link", { name: "Events" }).click();
  await noJs.waitForURL(`${server.base}/blog?type=Events`);
  assert.ok(await noJs.getByRole("heading", { name: "Events Posts (1)" }).isVisible());
  await context.close();
});

test("pricing toggle switches with JavaScript and as links without it", async () => {
  const page = await browser.newPage();
  const problems = watchConsole(page);
  await page.goto(`${server.base}/pricing`, { waitUntil: "networkidle" });
  const toggle = page.getByRole("navigation", { name: "Billing period" });
  assert.equal(await toggle.getByRole("link", { name: "Monthly" }).getAttribute("aria-current"), "page");
  await toggle.getByRole("link", { name: "Yearly" }).click();
  await page.waitForFunction(() => location.search === "?billing=yearly");
  // Router navigations render in a transition: wait for the toggle to follow.
  await page.waitForFunction(
    () => document.querySelector('nav[aria-label="Billing period"] a[aria-current="page"]')?.textContent === "Yearly",
  );
  assert.equal(await toggle.getByRole("link", { name: "Yearly" }).getAttribute("aria-current"), "page");
  assert.equal(await toggle.getByRole("link", { name: "Monthly" }).getAttribute("aria-current"), null);
  assert.equal(await page.getByText("Contact us for pricing").count(), 3);
  assert.deepEqual(problems, []);
  await page.close();

  const context = await browser.newContext({ javaScriptEnabled: false });
  const noJs = await context.newPage();
  await noJs.goto(`${server.base}/pricing`);
  await noJs.getByRole("navigation", { name: "Billing period" }).getByRole("link", { name: "Yearly" }).click();
  await noJs.waitForURL(`${server.base}/pricing?billing=yearly`);
  assert.equal(
    await noJs.getByRole("navigation", { name: "Billing period" }).getByRole("link", { name: "Yearly" }).getAttribute("aria-current"),
    "page",
  );
  await context.close();
});

test("tooltips open after 700 ms, not before", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The page's timers run on Playwright's clock: it moves only when the test
  // moves it, so the assertions are about the page's 700 ms, not the machine's.
  await page.clock.install();
  await page.goto(`${server.base}/pricing`, { waitUntil: "networkidle" });
  await hydrated(page);
  await page.clock.pauseAt(Date.now() + 60_000);
  const trigger = page.getByRole("button", { name: /^About / }).first();
  const tipId = await trigger.getAttribute("aria-describedby");
  const tip = page.locator(`[id="${tipId}"]`);
  // React renders a state change in a task of its own (a MessageChannel
  // message, which the clock leaves alone): two more such tasks after it
  // mean anything a timer set off has been rendered.
  const settle = () =>
    page.evaluate(async () => {
      for (let i = 0; i < 2; i++) {
        await new Promise((resolve) => {
          const channel = new MessageChannel();
          channel.port1.onmessage = resolve;
          channel.port2.postMessage(null);
        });
      }
    });
  await trigger.hover();
  await page.clock.runFor(699);
  await settle();
  assert.equal(await tip.isVisible(), false, "still closed at 699 ms");
  await page.clock.runFor(1);
  await tip.waitFor({ state: "visible", timeout: 5_000 });
  assert.equal(await tip.getAttribute("role"), "tooltip");
  await page.close();
});

test("the contact form asks for the name and email first", async () => {
  const page = await browser.newPage();
  await page.goto(`${server.base}/contact`, { waitUntil: "networkidle" });
  await page.getByRole("button", { name: /submit/i }).click();
  await page
    .getByRole("alert")
    .filter({ hasText: "Missing required fields: Please fill in the name and email address." })
    .waitFor();
  await page.close();
});

test("the team shows its loading state during a client-side load", async () => {
  const page = await browser.newPage();
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route("**/api/route-data?url=%2Fabout", async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "About" }).click();
  await page.getByText("Loading team data...").waitFor();
  release();
  await page.getByText("Amina Diallo").waitFor();
  assert.equal(await page.getByText("Loading team data...").count(), 0);
  await page.close();
});

test("axe finds no accessibility violation on any route, at phone and desktop widths", async () => {
  const { readFileSync } = await import("node:fs");
  const { createRequire } = await import("node:module");
  const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  const found = [];
  for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
    const each = await onPages(() => browser.newPage({ viewport }), [...ROUTES, "/no-such-page"], async (page, path) => {
      await page.goto(`${server.base}${path}`, { waitUntil: "networkidle" });
      // Through the DevTools protocol: the site's policy (rightly) refuses
      // an inline <script> tag.
      await page.evaluate(axeSource);
      const violations = await page.evaluate(async () =>
        (await window.axe.run()).violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      );
      return violations.map((v) => `${viewport.width}px ${path} ${v}`);
    });
    found.push(...each.flat());
  }
  assert.deepEqual(found, []);
});
