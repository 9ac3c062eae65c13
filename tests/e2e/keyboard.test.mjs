// Every interactive feature driven with the keyboard alone (Tab, Shift+Tab,
// Enter, Space, Escape), asserting at each step where focus is and what the
// live regions hold: what a keyboard user and a screen-reader user get.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hydrated, siteWithStripe, watchConsole } from "./harness.mjs";
import { announced, focusArrives, focused, focusedNode, press, tabTo, waitAnnounced } from "./keyboard.mjs";

const site = siteWithStripe();

/** The title the server gives the page at `path` (what a client-side
 *  arrival there must announce). */
async function titleOf(path) {
  const html = await (await fetch(`${site.server.base}${path}`)).text();
  return html.match(/<title>([^<]*)<\/title>/)[1].replace(/&amp;/g, "&");
}

async function open(path, viewport = { width: 1280, height: 800 }) {
  const page = await site.browser.newPage({ viewport });
  const problems = watchConsole(page);
  await page.goto(`${site.server.base}${path}`, { waitUntil: "networkidle" });
  await hydrated(page);
  return { page, problems };
}

/** The page's main heading has focus, shown to a keyboard user. */
async function onHeading(page, text) {
  const f = await focused(page);
  assert.equal(f.tag, "h1", `focus is on the main heading, not ${f.tag} "${f.text}"`);
  assert.equal(f.text, text);
  assert.ok(f.inMain);
  return f;
}

test("the skip link is the first stop and lands in main", async () => {
  const { page, problems } = await open("/pricing");
  const first = await press(page, "Tab");
  assert.equal(first.text, "Skip to content");
  assert.ok(first.focusVisible, "the skip link shows when focused");
  await press(page, "Enter");
  const next = await press(page, "Tab");
  assert.ok(next.inMain, `Tab after the skip link goes into main, not to "${next.text}"`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a header link followed with Enter is announced, focus starts on the new heading, and Back and Forward do the same", async () => {
  const { page, problems } = await open("/");
  assert.equal(await announced(page), "", "the live region is there from the first render, silent");
  assert.equal(await page.locator("#route-announcer[aria-live=polite]").count(), 1);
  await tabTo(page, (f) => f.inHeader && f.text === "Pricing");
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/pricing`);
  await waitAnnounced(page, "Pricing — Citizen Wallet");
  const heading = await onHeading(page, "Pricing");
  assert.ok(heading.focusVisible, "a keyboard user sees where focus went");
  // Not trapped: Tab goes on into the page, not back through the header.
  const next = await press(page, "Tab");
  assert.ok(next.inMain, `Tab after the heading stays in the page, not "${next.text}"`);
  assert.equal(await page.evaluate(() => document.querySelector("main h1").hasAttribute("tabindex")), false, "the heading is focusable only for the arrival");

  await page.goBack();
  await waitAnnounced(page, await titleOf("/"));
  assert.equal((await focused(page)).tag, "h1", "Back places focus on the page's heading too");
  await page.goForward();
  await waitAnnounced(page, "Pricing — Citizen Wallet");
  await onHeading(page, "Pricing");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a link followed with the mouse moves focus without a visible outline", async () => {
  const { page } = await open("/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "About" }).click();
  await waitAnnounced(page, "About — Citizen Wallet");
  const f = await focused(page);
  assert.equal(f.tag, "h1");
  assert.equal(f.focusVisible, false, "no outline flashes for a mouse user");
  await page.close();
});

test("footer links and the logo are reached and followed by keyboard", async () => {
  const { page, problems } = await open("/community");
  const privacy = await tabTo(page, (f) => f.inFooter && f.text === "Privacy Policy");
  assert.equal(privacy.href, "/privacy");
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/privacy`);
  await waitAnnounced(page, await titleOf("/privacy"));
  assert.equal((await focused(page)).tag, "h1");
  // Backwards from the heading: the header's last stop, then to the logo.
  await tabTo(page, (f) => f.inHeader && f.text === "Citizen Wallet home", { key: "Shift+Tab" });
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/`);
  await waitAnnounced(page, await titleOf("/"));
  assert.equal((await focused(page)).tag, "h1");
  assert.deepEqual(problems, []);
  await page.close();
});

test("the mobile menu opens with Enter or Space, closes on Escape with focus back on its button, and closes when focus moves on", async () => {
  const { page, problems } = await open("/about", { width: 390, height: 844 });
  const menu = page.locator("#mobile-menu");
  await tabTo(page, (f) => f.text === "Open menu");
  await press(page, "Enter");
  await menu.waitFor({ state: "visible" });
  assert.equal((await focusedNode(page)).name, "Close menu");
  assert.equal(await page.getByRole("button", { name: "Close menu" }).getAttribute("aria-expanded"), "true");
  const first = await press(page, "Tab");
  assert.equal(first.text, "Our Wallets");
  await press(page, "Tab");
  const back = await press(page, "Escape");
  await menu.waitFor({ state: "detached" });
  assert.equal(back.text, "Open menu", "Escape returns focus to the menu button");
  assert.equal(await page.getByRole("button", { name: "Open menu" }).getAttribute("aria-expanded"), "false");

  // Space opens it too; tabbing past its last link closes it.
  await press(page, "Space");
  await menu.waitFor({ state: "visible" });
  await tabTo(page, (f) => f.text === "Get Started" && f.inHeader);
  const out = await press(page, "Tab");
  assert.ok(!out.inHeader, `focus moved on into the page ("${out.text}")`);
  await menu.waitFor({ state: "detached" });

  // A menu link followed with Enter: the menu closes, the new page is
  // announced and its heading has focus.
  await tabTo(page, (f) => f.text === "Open menu", { key: "Shift+Tab" });
  await press(page, "Enter");
  await tabTo(page, (f) => f.text === "Blog" && f.inHeader);
  await press(page, "Enter");
  await waitAnnounced(page, "Blog — Citizen Wallet");
  await onHeading(page, "Citizen Wallet Blog");
  assert.equal(await menu.count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a blog filter chosen with Enter announces what is shown and keeps focus on the filter; Back does the same", async () => {
  const { page, problems } = await open("/blog");
  // The posts on screen: the featured one and the cards.
  const shown = () => page.locator("main article").count();
  const all = await shown();
  await tabTo(page, (f) => f.inMain && f.text === "Events");
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/blog?type=Events`);
  await page.getByRole("heading", { name: "Events Posts (1)" }).waitFor();
  await waitAnnounced(page, "Events posts: 2 shown");
  assert.equal(await shown(), 2);
  const still = await focused(page);
  assert.equal(still.text, "Events", "focus stays on the filter");
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-current")), "page");
  await tabTo(page, (f) => f.text === "Feature");
  await press(page, "Enter");
  await waitAnnounced(page, "Feature posts: 1 shown");
  assert.equal(await shown(), 1);
  await page.goBack();
  await waitAnnounced(page, "Events posts: 2 shown");
  await page.goBack();
  await waitAnnounced(page, `All posts: ${all} shown`);
  assert.equal((await focused(page)).tag, "a", "a new view of the same page does not move focus");

  // A post is a new page: announced by its title, focus on its heading.
  await tabTo(page, (f) => f.text === "Read Full Article");
  await press(page, "Enter");
  await page.waitForURL(/\/blog\/[a-z-]+$/);
  await page.locator("main article h1").waitFor();
  const title = await page.locator("main h1").innerText();
  await waitAnnounced(page, `${title} — Citizen Wallet Blog`);
  await onHeading(page, title);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the billing toggle is worked with Tab, Shift+Tab and Enter, says which prices are shown and exposes its state", async () => {
  const { page, problems } = await open("/pricing");
  const toggle = page.getByRole("navigation", { name: "Billing period" });
  await tabTo(page, (f) => f.text === "Yearly");
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/pricing?billing=yearly`);
  await waitAnnounced(page, "Yearly prices shown");
  assert.equal((await focused(page)).text, "Yearly", "focus stays on the toggle");
  assert.equal(await toggle.getByRole("link", { name: "Yearly" }).getAttribute("aria-current"), "page");
  assert.equal(await toggle.getByRole("link", { name: "Monthly" }).getAttribute("aria-current"), null);
  const monthly = await press(page, "Shift+Tab");
  assert.equal(monthly.text, "Monthly");
  await press(page, "Enter");
  await waitAnnounced(page, "Monthly prices shown");
  assert.equal(await toggle.getByRole("link", { name: "Monthly" }).getAttribute("aria-current"), "page");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a tooltip opens on keyboard focus, is the trigger's description, and Escape closes it", async () => {
  const { page, problems } = await open("/pricing");
  await tabTo(page, (f) => f.tag === "button" && f.text.startsWith("About "));
  const tipId = await page.evaluate(() => document.activeElement.getAttribute("aria-describedby"));
  const tip = page.locator(`[id="${tipId}"]`);
  await tip.waitFor({ state: "visible" });
  assert.equal(await tip.getAttribute("role"), "tooltip");
  assert.equal((await focusedNode(page)).description, (await tip.innerText()).trim(), "a screen reader reads the tip with the button");
  await press(page, "Escape");
  await tip.waitFor({ state: "hidden" });
  assert.equal((await focused(page)).tag, "button", "Escape leaves focus where it was");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a plan's checkout button opens Stripe's stand-in in a new tab from the keyboard", async () => {
  const context = await site.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${site.server.base}/pricing`, { waitUntil: "networkidle" });
  await hydrated(page);
  const before = site.stripe.created.length;
  // The first plan with a price (Community Standard; Light has none here).
  await tabTo(page, (f) => f.tag === "button" && f.text === "Get Started");
  const [tab] = await Promise.all([context.waitForEvent("page"), press(page, "Enter")]);
  await tab.waitForURL(/\/__checkout\/cs_test_\d+$/);
  assert.equal(site.stripe.created.length, before + 1);
  assert.equal(site.stripe.created.at(-1)["line_items[0][price]"], "price_std_m");
  // Space works on the same button.
  const [again] = await Promise.all([context.waitForEvent("page"), press(page, "Space")]);
  await again.waitForURL(/\/__checkout\/cs_test_\d+$/);
  assert.equal(site.stripe.created.length, before + 2);
  await context.close();
});

test("an empty contact form submitted with Enter focuses the first missing field, marked invalid with its own message", async () => {
  const { page, problems } = await open("/contact");
  await tabTo(page, (f) => f.tag === "button" && f.text === "Submit Request");
  await press(page, "Enter");
  await page.getByRole("alert").filter({ hasText: "Missing required fields: Please fill in the name and email address." }).waitFor();
  await page.waitForFunction(() => document.activeElement?.id === "contact-name");
  assert.deepEqual(await focusedNode(page), {
    role: "textbox",
    name: "Community Name",
    description: "Error: Enter your community's name",
    invalid: "true",
  });
  const email = page.locator("#contact-email");
  assert.equal(await email.getAttribute("aria-invalid"), "true");
  assert.equal(await page.locator(`[id="${await email.getAttribute("aria-describedby")}"]`).textContent(), "Error: Enter an email address");
  // Fields that are not in error are not marked.
  assert.equal(await page.locator("#contact-website").getAttribute("aria-invalid"), null);
  // A sighted visitor sees the mark too: a field in error has another border.
  const border = (id) => page.evaluate((i) => getComputedStyle(document.getElementById(i)).borderColor, id);
  assert.notEqual(await border("contact-email"), await border("contact-website"), "the field in error has its own border");

  // The mark clears as the field is put right; the other stays.
  await page.keyboard.type("Riverbend");
  await page.waitForFunction(() => !document.getElementById("contact-name").hasAttribute("aria-invalid"));
  assert.equal((await focusedNode(page)).description, "");
  assert.equal(await email.getAttribute("aria-invalid"), "true");

  // An address the browser's check refuses: focus goes to it, with why.
  await tabTo(page, (f) => f.id === "contact-email");
  await page.keyboard.type("ana");
  await tabTo(page, (f) => f.text === "Submit Request");
  await press(page, "Space");
  await page.getByRole("alert").filter({ hasText: "Enter an email address like name@example.org" }).waitFor();
  await page.waitForFunction(() => document.activeElement?.id === "contact-email");
  assert.equal((await focusedNode(page)).description, "Error: Enter an email address like name@example.org");

  // One the browser accepts and the server does not: the server's answer
  // marks the field and the toast says why.
  await page.keyboard.press("Control+A");
  await page.keyboard.type("ana@localhost");
  await page.waitForFunction(() => !document.getElementById("contact-email").hasAttribute("aria-invalid"));
  await page.getByRole("alert").filter({ hasText: "Enter an email address like" }).waitFor({ state: "detached" });
  await page.keyboard.press("Enter");
  await page.getByRole("alert").filter({ hasText: "email: not a valid email address" }).waitFor();
  await page.waitForFunction(() => document.getElementById("contact-email").getAttribute("aria-invalid") === "true");
  assert.equal((await focused(page)).id, "contact-email");

  // Put right and sent with Enter: the success toast is in the polite live
  // region, then the visitor is taken home, announced, focus on its heading.
  await page.keyboard.press("Control+A");
  await page.keyboard.type("ana@riverbend.example");
  await page.keyboard.press("Enter");
  await page.getByRole("status").filter({ hasText: "Request submitted!" }).waitFor();
  assert.match(await page.getByRole("status").filter({ hasText: "Request submitted!" }).innerText(), /Thank you for your submission/);
  await page.waitForURL(`${site.server.base}/`, { timeout: 5_000 });
  await waitAnnounced(page, await titleOf("/"));
  assert.equal((await focused(page)).tag, "h1");
  // The refusal above is the one failed load expected.
  assert.deepEqual(problems.filter((p) => !p.includes("status of 422")), []);
  await page.close();
});

test("without JavaScript, the refused form comes back with the same fields marked and the first one focused", async () => {
  const context = await site.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${site.server.base}/contact`);
  await page.getByLabel("Contact Person").fill("Ana");
  await page.getByRole("button", { name: "Submit Request" }).press("Enter");
  await page.waitForURL(`${site.server.base}/api/save-to-notion`);
  assert.match(await page.title(), /^Error: Request an Intro/);
  assert.ok(await page.getByRole("alert").filter({ hasText: "Missing required fields: Please fill in the name and email address." }).isVisible());
  assert.equal(await focusArrives(page, "contact-name"), "contact-name", "the first field in error has focus");
  assert.deepEqual(await focusedNode(page), {
    role: "textbox",
    name: "Community Name",
    description: "Error: Enter your community's name",
    invalid: "true",
  });
  assert.equal(await page.locator("#contact-email").getAttribute("aria-invalid"), "true");
  assert.equal(await page.locator("#contact-contactPerson").getAttribute("aria-invalid"), null);
  assert.equal(await page.getByLabel("Contact Person").inputValue(), "Ana", "what was typed is kept");
  await context.close();
});

test("the 404 page's link home is reached and followed by keyboard", async () => {
  const { page } = await open("/no-such-page");
  const home = await tabTo(page, (f) => f.inMain && f.text === "Return to Home");
  assert.ok(home.focusVisible);
  await press(page, "Enter");
  await page.waitForURL(`${site.server.base}/`);
  await waitAnnounced(page, await titleOf("/"));
  assert.equal((await focused(page)).tag, "h1");
  await page.close();
});
