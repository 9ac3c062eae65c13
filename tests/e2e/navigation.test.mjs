import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, onPages, startServer, watchConsole, watchedPages } from "./harness.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test("hydrates without warnings and navigates client-side from the header", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchConsole(page);
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  await page.evaluate(() => { window.__sameDocument = true; });

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Pricing" }).click();
  await page.waitForURL(`${server.base}/pricing`);
  await page.getByRole("heading", { level: 1, name: "Pricing" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no full page load");
  assert.match(await page.title(), /^Pricing/);

  // Back goes back, still in the same document.
  await page.goBack();
  await page.getByRole("heading", { level: 1, name: "The wallet for your community currency" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true);

  assert.deepEqual(problems, []);
  await page.close();
});

test("every header route hydrates cleanly on first load", async () => {
  const pages = watchedPages(() => browser.newPage({ viewport: { width: 1280, height: 800 } }));
  await onPages(pages.newPage, ["/wallets", "/about", "/community", "/blog", "/ctzn", "/terms", "/nope"], async (page, path) => {
    await page.goto(`${server.base}${path}`, { waitUntil: "networkidle" });
  });
  assert.deepEqual(pages.problems(), []);
});

test("the mobile menu opens and closes at a phone width", async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  const problems = watchConsole(page);
  await page.goto(`${server.base}/about`, { waitUntil: "networkidle" });
  const menu = page.locator("#mobile-menu");
  assert.equal(await menu.count(), 0);

  const toggle = page.getByRole("button", { name: "Open menu" });
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await toggle.click();
  await menu.waitFor({ state: "visible" });
  const close = page.getByRole("button", { name: "Close menu" });
  assert.equal(await close.getAttribute("aria-expanded"), "true");
  for (const label of ["Our Wallets", "Pricing", "About", "Community", "Blog", "CTZN Token", "Get Started"]) {
    assert.ok(await menu.getByRole("link", { name: label, exact: true }).isVisible(), label);
  }
  await close.click();
  await menu.waitFor({ state: "detached" });

  // A link followed from the menu navigates and closes it.
  await page.getByRole("button", { name: "Open menu" }).click();
  await menu.getByRole("link", { name: "Community" }).click();
  await page.getByRole("heading", { level: 1, name: "Join Our Community" }).waitFor();
  assert.equal(await menu.count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("route data is retried before a navigation gives up", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  let calls = 0;
  await page.route("**/api/route-data**", (route) => {
    calls += 1;
    return calls <= 2 ? route.fulfill({ status: 503, body: "down" }) : route.continue();
  });
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "CTZN Token" }).click();
  await page.waitForFunction(() => document.title.startsWith("CTZN Token"), null, { timeout: 15_000 });
  assert.equal(calls, 3, "two failures, then the third try succeeds");
  await page.close();
});

test("a page that breaks in the browser shows the generic error screen and logs the detail", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchConsole(page);
  await page.goto(`${server.base}/`, { waitUntil: "networkidle" });
  // Data the Wallets page cannot render (a list that is not one).
  await page.route("**/api/route-data**", (route) =>
    route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ page: "Wallets", status: 200, data: { communities: [null] } }) }),
  );
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Our Wallets" }).click();
  await page.getByRole("heading", { name: "Unexpected Application Error!" }).waitFor();
  const main = await page.locator("main").innerText();
  assert.match(main, /500 Internal Server Error/);
  assert.doesNotMatch(main, /null|undefined|TypeError|Cannot read/, "the exception's text is not shown to the visitor");
  assert.ok(problems.some((p) => p.includes("A page failed to render") && /null|TypeError/.test(p)), `the detail is logged: ${problems}`);
  await page.close();
});

test("without JavaScript every link is a plain server-rendered page", async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${server.base}/`);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "About" }).click();
  await page.waitForURL(`${server.base}/about`);
  assert.ok(await page.getByRole("heading", { level: 1, name: "About" }).isVisible());
  const res = await page.goto(`${server.base}/missing-page`);
  assert.equal(res.status(), 404);
  assert.ok(await page.getByText("Oops! Page not found").isVisible());
  await page.getByRole("link", { name: "Return to Home" }).click();
  await page.waitForURL(`${server.base}/`);
  await context.close();
});
