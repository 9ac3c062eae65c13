import assert from "node:assert/strict";
import { test } from "node:test";
import { siteWithStripe, watchConsole } from "./harness.mjs";

const site = siteWithStripe();

test("choosing a plan opens Stripe Checkout in a new tab, and the success page verifies it", async () => {
  const context = await site.browser.newContext();
  const page = await context.newPage();
  const problems = watchConsole(page);
  await page.goto(`${site.server.base}/pricing`, { waitUntil: "networkidle" });
  const card = page.locator("article", { has: page.getByRole("heading", { name: "Community Standard" }) });
  assert.ok(await card.getByText("€49", { exact: true }).isVisible());
  assert.ok(await card.getByText("€490 per year (save 2 months)").isVisible());
  // A plan priced in dollars shows dollars (and hydrates without a mismatch).
  const pro = page.locator("article", { has: page.getByRole("heading", { name: "Community Pro" }) });
  assert.ok(await pro.getByText("$99", { exact: true }).isVisible());
  assert.ok(!(await pro.innerText()).includes("€"));

  const [tab] = await Promise.all([context.waitForEvent("page"), card.getByRole("button", { name: "Get Started" }).click()]);
  await tab.waitForURL(/\/__checkout\/cs_test_1$/);
  assert.equal(page.url(), `${site.server.base}/pricing`, "the pricing page stays where it was");
  assert.equal(site.stripe.created.length, 1);
  assert.equal(site.stripe.created[0].mode, "subscription");
  assert.equal(site.stripe.created[0]["line_items[0][price]"], "price_std_m");
  assert.equal(site.stripe.created[0].success_url, `${site.server.base}/success?session_id={CHECKOUT_SESSION_ID}`);

  // Stripe sends the buyer back to the success page with the session id.
  await tab.goto(`${site.server.base}/success?session_id=cs_test_1`, { waitUntil: "networkidle" });
  await tab.getByRole("heading", { name: "Payment Successful!" }).waitFor();
  assert.ok(await tab.getByText("jenny@example.com").isVisible());
  assert.ok(await tab.getByText("49.00 EUR").isVisible());
  assert.deepEqual(problems, []);
  await context.close();
});

test("a SEPA checkout that is complete but not yet paid says the payment is processing", async () => {
  const page = await site.browser.newPage();
  const problems = watchConsole(page);
  await page.goto(`${site.server.base}/success?session_id=cs_test_sepa1`, { waitUntil: "networkidle" });
  await page.getByRole("heading", { name: "Payment Processing" }).waitFor();
  assert.ok(await page.getByText(/being confirmed by your bank/).isVisible());
  assert.equal(await page.getByText("Payment Successful!").count(), 0);
  assert.match(await page.title(), /^Payment Processing/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("without JavaScript the plan button posts and is redirected to Checkout", async () => {
  const context = await site.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${site.server.base}/pricing?billing=yearly`);
  const card = page.locator("article", { has: page.getByRole("heading", { name: "Community Standard" }) });
  assert.ok(await card.getByText("Save 1 months").isVisible());
  const before = site.stripe.created.length;
  await card.getByRole("button", { name: "Get Started" }).click();
  await page.waitForURL(/\/__checkout\/cs_test_\d+$/);
  assert.equal(site.stripe.created.length, before + 1);
  assert.equal(site.stripe.created.at(-1)["line_items[0][price]"], "price_std_y");
  await context.close();
});

test("the contact form sends a request and goes home after two seconds", async () => {
  const page = await site.browser.newPage();
  const problems = watchConsole(page);
  await page.goto(`${site.server.base}/contact`, { waitUntil: "networkidle" });
  await page.getByLabel("Community Name").fill("Riverbend");
  await page.getByLabel("Email").fill("ana@riverbend.example");
  await page.getByLabel("Loyalty").check();
  await page.getByRole("button", { name: /submit/i }).click();
  await page.getByText("Request submitted!").waitFor();
  assert.ok(await page.getByText("Thank you for your submission. We'll get back to you soon!").isVisible());
  await page.waitForURL(`${site.server.base}/`, { timeout: 5000 });
  assert.deepEqual(problems, []);
  await page.close();

  // A refused request shows the server's message in a destructive toast.
  const again = await site.browser.newPage();
  await again.goto(`${site.server.base}/contact`, { waitUntil: "networkidle" });
  await again.getByLabel("Community Name").fill("Riverbend");
  await again.getByLabel("Email").fill("ana@localhost");
  await again.getByRole("button", { name: /submit/i }).click();
  await again.getByRole("alert").filter({ hasText: "email: not a valid email address" }).waitFor();
  await again.close();
});

test("a contact request whose answer was lost is sent again as the same submission and stored once", async () => {
  const page = await site.browser.newPage();
  const metric = async (line) => (await (await fetch(`${site.server.base}/metrics`)).text()).split("\n").find((l) => l.startsWith(line));
  const storedBefore = await metric('intro_submissions_total{outcome="stored"}');
  await page.goto(`${site.server.base}/contact`, { waitUntil: "networkidle" });
  let lost = 0;
  await page.route("**/api/save-to-notion", async (route) => {
    if (lost++ === 0) {
      // The server gets it and stores it; the answer never reaches the page.
      await route.fetch();
      return route.abort("connectionreset");
    }
    return route.continue();
  });
  await page.getByLabel("Community Name").fill("Lost Answer Co-op");
  await page.getByLabel("Email").fill("ops@lost.example");
  await page.getByRole("button", { name: /submit/i }).click();
  await page.getByRole("alert").filter({ hasText: "Error" }).first().waitFor();
  // The visitor tries again: what they typed is still there.
  assert.equal(await page.getByLabel("Community Name").inputValue(), "Lost Answer Co-op");
  await page.getByRole("button", { name: /submit/i }).click();
  await page.getByText("Request submitted!").waitFor();
  assert.equal(await metric('intro_submissions_total{outcome="duplicate"}'), 'intro_submissions_total{outcome="duplicate"} 1');
  const count = (l) => Number(l?.split(" ").at(-1) ?? 0);
  assert.equal(count(await metric('intro_submissions_total{outcome="stored"}')) - count(storedBefore), 1, "stored once");
  await page.close();
});
