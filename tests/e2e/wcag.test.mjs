// WCAG 2.2 AA criteria axe does not judge, measured in Chromium on every
// route: focus not obscured by the sticky header (2.4.11), reflow at 320 CSS
// px (1.4.10), target size (2.5.8), reduced motion (2.3.3's practice) and
// text spacing (1.4.12). docs/accessibility.md says how each is judged.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TABLE_PATHS, hydrated, onPages, siteWithStripe } from "./harness.mjs";
import { TEXT_SPACING, focusPlace, smallTargets, spacingProblems } from "./wcag.mjs";

const site = siteWithStripe();

const ROUTES = [
  ...TABLE_PATHS,
  "/blog?type=Events",
  "/pricing?billing=yearly",
  "/success?session_id=cs_test_1",
  "/no-such-page",
];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };


async function visit(page, path) {
  await page.goto(`${site.server.base}${path}`, { waitUntil: "networkidle" });
  await hydrated(page);
}

/** Every focus stop of the page, tabbing with `key`: the stops that are
 *  partly or wholly under the sticky header (the page's only content that
 *  stays in place; a text field scrolled in just far enough to show its
 *  caret at the window's bottom is the browser's doing and is allowed). */
async function hiddenStops(page, key) {
  const hidden = [];
  let stops = 0;
  for (; stops < 400; stops++) {
    await page.keyboard.press(key);
    const at = await page.evaluate(focusPlace);
    if (!at) break;
    if (!at.inHeader && at.top < at.headerBottom - 0.5) {
      hidden.push(`${at.name} at ${Math.round(at.top)} (header ends at ${Math.round(at.headerBottom)})`);
    }
  }
  assert.ok(stops > 3 && stops < 400, `${key}: ${stops} stops`);
  return hidden;
}

test("no focused element hides under the sticky header, tabbing either way, on any route", async () => {
  const found = [];
  for (const viewport of [DESKTOP, PHONE]) {
    // Without smooth scrolling, so each stop is measured where it ends up
    // (a smooth scroll ends at the same place, later).
    const context = await site.browser.newContext({ viewport, reducedMotion: "reduce" });
    const each = await onPages(() => context.newPage(), ROUTES, async (page, path) => {
      const found = [];
      await visit(page, path);
      for (const h of await hiddenStops(page, "Tab")) found.push(`${viewport.width}px ${path} Tab: ${h}`);
      // Backwards from the end of the page, as the report found it. The
      // forward walk may have left focus outside the document (past its
      // last stop); the walk back starts from a mark after the page's last
      // element, focusable by script only, so it starts in the document.
      await page.evaluate(() => {
        const end = document.createElement("span");
        end.tabIndex = -1;
        end.id = "walk-back-from-here";
        document.body.append(end);
        end.focus({ preventScroll: true });
        window.scrollTo(0, document.documentElement.scrollHeight);
      });
      const back = await hiddenStops(page, "Shift+Tab");
      await page.evaluate(() => document.getElementById("walk-back-from-here")?.remove());
      for (const h of back) found.push(`${viewport.width}px ${path} Shift+Tab: ${h}`);
      return found;
    });
    found.push(...each.flat());
    await context.close();
  }
  assert.deepEqual(found, []);
});

test("no route scrolls sideways at 320 CSS px", async () => {
  const wide = await onPages(() => site.browser.newPage({ viewport: { width: 320, height: 640 } }), ROUTES, async (page, path) => {
    await visit(page, path);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    return width > 320 ? `${path}: ${width}px` : null;
  });
  assert.deepEqual(wide.filter(Boolean), []);
});

test("targets are 24 CSS px or spaced as WCAG 2.2 allows, at phone and desktop widths", async () => {
  const found = [];
  for (const viewport of [PHONE, DESKTOP]) {
    const each = await onPages(() => site.browser.newPage({ viewport }), ROUTES, async (page, path) => {
      await visit(page, path);
      return (await page.evaluate(smallTargets)).map((t) => `${viewport.width}px ${path}: ${t}`);
    });
    found.push(...each.flat());
    // The open mobile menu's links too.
    if (viewport === PHONE) {
      const page = await site.browser.newPage({ viewport });
      await visit(page, ROUTES.at(-1));
      await page.getByRole("button", { name: "Open menu" }).click();
      for (const t of await page.evaluate(smallTargets)) found.push(`menu: ${t}`);
      await page.close();
    }
  }
  assert.deepEqual(found, []);
});

test("nothing animates for a visitor who asks for reduced motion; the logo strip moves for the others", async () => {
  const running = (page) =>
    page.evaluate(() => ({
      animations: document.getAnimations().filter((a) => a.playState === "running").map((a) => a.animationName ?? a.constructor.name),
      scroll: getComputedStyle(document.documentElement).scrollBehavior,
    }));
  const still = await site.browser.newContext({ reducedMotion: "reduce", viewport: DESKTOP });
  let moving;
  try {
    moving = await onPages(() => still.newPage(), ROUTES, async (page, path) => {
      await visit(page, path);
      const now = await running(page);
      return now.animations.length > 0 || now.scroll !== "auto" ? `${path}: ${JSON.stringify(now)}` : null;
    });
  } finally {
    await still.close();
  }
  assert.deepEqual(moving.filter(Boolean), []);

  // The same check sees motion where there is some.
  const plain = await site.browser.newPage({ viewport: DESKTOP });
  await visit(plain, "/");
  const home = await running(plain);
  assert.ok(home.animations.includes("marquee"), `the home page's strip moves: ${JSON.stringify(home)}`);
  assert.equal(home.scroll, "smooth");
  await plain.close();
});

test("the text spacing WCAG 1.4.12 allows clips and overlaps no text, at phone and desktop widths", async () => {
  const found = [];
  for (const viewport of [PHONE, DESKTOP]) {
    // The visitor's own style sheet (a bookmarklet or an extension), which
    // the site's policy would refuse from a page script.
    const context = await site.browser.newContext({ viewport, bypassCSP: true, reducedMotion: "reduce" });
    const each = await onPages(() => context.newPage(), ROUTES, async (page, path) => {
      await visit(page, path);
      const before = await page.evaluate(spacingProblems);
      assert.deepEqual(before, [], `${viewport.width}px ${path} before the spacing`);
      await page.addStyleTag({ content: TEXT_SPACING });
      return (await page.evaluate(spacingProblems)).map((p) => `${viewport.width}px ${path}: ${p}`);
    });
    found.push(...each.flat());
    await context.close();
  }
  assert.deepEqual(found, []);
});
