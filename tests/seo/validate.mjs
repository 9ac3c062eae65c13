// The platforms' own checks over every page a crawler or a link preview
// reads: structured-data-testing-tool (npm) with its Google, Twitter and
// Facebook presets, on every public route and every post (the sitemap's
// list), served by this build's server. Prints a table per page with the
// tests passed, failed and warned, and every failure and warning by name;
// exits non-zero when any page fails a test or lacks the structured data it
// must carry (a page whose JSON-LD the tool cannot read would otherwise
// pass the Google checks by having nothing to check).
//
//   node tests/seo/validate.mjs          (cargo test runs it: tests/seo.rs)
//
// The server runs with the Stripe stand-in, so the pricing page carries its
// Product offers. Uses $CITIZEN_SITE_BIN, else target/debug/citizen-site.
// The tool fetches each page itself; where it cannot reach the loopback
// server, it is given the HTML fetched here instead (and says so).
import { createRequire } from "node:module";
import { startServer } from "../e2e/harness.mjs";
import { startStripe } from "../e2e/stripe-standin.mjs";
import { table } from "../ops/tools.mjs";

const require = createRequire(import.meta.url);
const { structuredDataTest } = require("structured-data-testing-tool");
const { Google, Twitter, Facebook } = require("structured-data-testing-tool/presets");
const PRESETS = [Google, Twitter, Facebook];

let siteBase = "";
const stripe = await startStripe(() => siteBase);
const server = await startServer({ STRIPE_SECRET_KEY: "sk_test_validate", STRIPE_API_BASE: stripe.base });
siteBase = server.base;

/** What each page must be found to carry, beyond the presets' tests. */
function expectedSchemas(path) {
  const schemas = ["Organization"];
  if (path.startsWith("/blog/")) schemas.push("BlogPosting", "BreadcrumbList");
  if (path === "/blog") schemas.push("Blog");
  if (path === "/pricing") schemas.push("Product");
  return schemas;
}

/** The tool's verdict on one page: its result object, whether it passed or
 *  not, and how it got the page. */
async function check(url) {
  const run = async (input) => {
    try {
      return await structuredDataTest(input, { presets: PRESETS });
    } catch (err) {
      if (err?.type === "VALIDATION_FAILED") return err.res;
      throw err;
    }
  };
  try {
    return { res: await run(url), via: "url" };
  } catch (err) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: ${res.status}`, { cause: err });
    return { res: await run(await res.text()), via: `fetched HTML (the tool could not fetch the page: ${err.message ?? err})` };
  }
}

const rows = [];
const problems = [];
const notes = [];
try {
  const sitemap = await (await fetch(`${server.base}/sitemap.xml`)).text();
  const paths = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => new URL(m[1]).pathname);
  if (!paths.includes("/") || !paths.some((p) => p.startsWith("/blog/"))) throw new Error(`the sitemap lists no pages or posts:\n${sitemap}`);
  for (const path of paths) {
    const { res, via } = await check(`${server.base}${path}`);
    if (via !== "url") notes.push(`${path}: ${via}`);
    const missing = expectedSchemas(path).filter((s) => !res.schemas.includes(s));
    const presetGroups = new Set(res.tests.flatMap((t) => t.groups ?? [t.group]));
    const unrun = ["Twitter", "Facebook"].filter((g) => !presetGroups.has(g));
    rows.push([path, res.passed.length, res.failed.length, res.warnings.length, res.schemas.join(" ")]);
    for (const t of res.failed) problems.push(`${path}: FAILED ${t.group ?? ""} ${t.description ?? t.test}${t.error?.message ? ` (${t.error.message})` : ""}`);
    for (const s of missing) problems.push(`${path}: no ${s} found in the page's JSON-LD`);
    for (const g of unrun) problems.push(`${path}: the ${g} preset's tests did not run`);
    for (const t of res.warnings) notes.push(`${path}: warning: ${t.group ?? ""} ${t.description ?? t.test}`);
  }
} finally {
  server.stop();
  stripe.stop();
}

console.log(table(["page", "passed", "failed", "warnings", "schemas found"], rows));
if (notes.length) console.log(notes.join("\n"));
if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n${problems.join("\n")}`);
  process.exit(1);
}
console.log(`\nstructured-data-testing-tool (Google, Twitter, Facebook): ${rows.length} pages, 0 failures`);
process.exit(0);
