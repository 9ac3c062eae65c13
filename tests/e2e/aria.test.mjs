// The accessibility tree of every route, as Playwright's ariaSnapshot reads
// it from Chromium (roles, names, states, levels), compared with the copy
// kept in tests/e2e/aria/. A change in what a screen reader is given shows
// as a diff of those files for a reviewer to read. Taken with the test
// stand-ins (the sample team, the Stripe stand-in's prices), so only the
// site's own changes move them.
//
// After a deliberate change: UPDATE_ARIA_SNAPSHOTS=1 node --test tests/e2e/aria.test.mjs
// rewrites the files (CITIZEN_SITE_BIN names the server binary).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { TABLE_PATHS, hydrated, onPages, siteWithStripe } from "./harness.mjs";

const DIR = new URL("./aria/", import.meta.url).pathname;
const UPDATE = process.env.UPDATE_ARIA_SNAPSHOTS === "1";
const ROUTES = [
  ...TABLE_PATHS,
  "/success?session_id=cs_test_1",
  "/no-such-page",
];

const site = siteWithStripe();

/** The snapshot's file for a route: "/" is home, "/blog/x" is blog-x,
 *  "/success?session_id=x" is success-session_id-x. */
function fileOf(route) {
  const name = route.replace(/^\//, "").replace(/[/?=&]/g, "-") || "home";
  return path.join(DIR, `${name}.yml`);
}

/** Today's date is the terms page's only moving part. */
function steady(snapshot) {
  return snapshot.replace(/\b(January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{4}\b/g, (m) =>
    m === "January 1, 2024" ? m : "<today>",
  );
}

/** Compares (or, updating, writes) one snapshot; returns a problem or null. */
function check(file, snapshot) {
  const text = `${steady(snapshot).trimEnd()}\n`;
  if (UPDATE) {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(file, text);
    return null;
  }
  const kept = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
  if (kept === text) return null;
  const name = path.relative(process.cwd(), file);
  if (kept === null) return `${name} is missing (UPDATE_ARIA_SNAPSHOTS=1 writes it)`;
  const [a, b] = [kept.split("\n"), text.split("\n")];
  const at = a.findIndex((line, i) => line !== b[i]);
  return `${name} differs from line ${at + 1}:\n  kept: ${a[at]}\n  now:  ${b[at]}`;
}

test("every route's main content gives screen readers the tree kept in tests/e2e/aria", async () => {
  const problems = await onPages(() => site.browser.newPage({ viewport: { width: 1280, height: 800 } }), ROUTES, async (page, route) => {
    await page.goto(`${site.server.base}${route}`, { waitUntil: "networkidle" });
    await hydrated(page);
    return check(fileOf(route), await page.locator("main").ariaSnapshot());
  });
  assert.deepEqual(problems.filter(Boolean), []);
});

test("the header, the open mobile menu and the footer give the tree kept in tests/e2e/aria", async () => {
  const problems = [];
  const desktop = await site.browser.newPage({ viewport: { width: 1280, height: 800 } });
  await desktop.goto(`${site.server.base}/`, { waitUntil: "networkidle" });
  await hydrated(desktop);
  problems.push(check(path.join(DIR, "_header.yml"), await desktop.locator("header").ariaSnapshot()));
  problems.push(check(path.join(DIR, "_footer.yml"), await desktop.locator("footer").ariaSnapshot()));
  await desktop.close();
  const phone = await site.browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(`${site.server.base}/`, { waitUntil: "networkidle" });
  await hydrated(phone);
  await phone.getByRole("button", { name: "Open menu" }).click();
  await phone.locator("#mobile-menu").waitFor();
  problems.push(check(path.join(DIR, "_header-menu-open.yml"), await phone.locator("header").ariaSnapshot()));
  await phone.close();
  assert.deepEqual(problems.filter(Boolean), []);
});

test("a kept snapshot that no longer matches is reported with the line that changed", { skip: UPDATE }, () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "aria-"));
  const file = path.join(dir, "x.yml");
  fs.writeFileSync(file, '- heading "Pricing" [level=1]\n- link "Yearly"\n');
  assert.equal(check(file, '- heading "Pricing" [level=1]\n- link "Yearly"'), null);
  const problem = check(file, '- heading "Pricing" [level=1]\n- link "Yearly" [pressed]');
  assert.match(problem, /differs from line 2:\n {2}kept: - link "Yearly"\n {2}now: {2}- link "Yearly" \[pressed\]/);
  assert.match(check(path.join(dir, "y.yml"), "- main"), /y\.yml is missing/);
  fs.rmSync(dir, { recursive: true });
});
