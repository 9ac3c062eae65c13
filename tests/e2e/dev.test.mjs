// `citizen-site dev` on a temporary copy of the sources, edited the way a
// maintainer edits them: each change shows in the served HTML (and in the JS
// bundle and stylesheet where it belongs), a broken file shows where it is
// broken while the rest of the site keeps working, the fix recovers without a
// restart, drafts show, and an open page reloads by itself. Waits are
// bounded; nothing here asserts a time.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, afterEach, before, test } from "node:test";
import { copyTree, edit, siteBinary, sleep, startDev, until } from "../ops/tools.mjs";
import { launchBrowser, watchConsole } from "./harness.mjs";

let tree;
let dev;
const originals = new Map();

/** Edits a file of the tree, remembering how it was for afterEach. */
function change(file, from, to) {
  if (!originals.has(file)) originals.set(file, fs.readFileSync(path.join(tree, file), "utf8"));
  edit(tree, file, from, to);
}

const ok = (status) => status === 200;
/** Polls `p` until `accept` holds. Running out of time says what the terminal
 *  said last too (the builder's reports, the reloads), which tells a missed
 *  change from a failed build or a slow one. */
const get = (p, accept, ms) =>
  until(`${dev.base}${p}`, accept, ms).catch((e) => {
    throw new Error(`${e.message}\n--- what \`citizen-site dev\` said last:\n${dev.output.slice(-4000)}`);
  });
/** What the terminal has said since `mark` (an earlier `dev.output.length`). */
const said = (mark) => dev.output.slice(mark);

before(async () => {
  tree = copyTree();
  dev = await startDev(siteBinary(), tree);
});

afterEach(async () => {
  const mark = dev.output.length;
  for (const [file, text] of originals) fs.writeFileSync(path.join(tree, file), text);
  // Back to the sources as they were, built and served before the next test
  // edits: every page renders again. (A page answering is not enough: an
  // edit saved while the restoring build runs may reach that build's bundle
  // but not its stylesheet, whose scan came first; the build after it has
  // both, but a test reading the first would fail.)
  await reloaded(mark, [...originals.keys()]);
  originals.clear();
  for (const p of ["/", "/blog", "/wallets"]) await get(p, ok);
});

/** Waits until the terminal, since `mark`, says a reload took in each of
 *  `files` (with problems or without). */
async function reloaded(mark, files, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const lists = [...said(mark).matchAll(/dev: reloaded[^(\n]*\(([^)\n]*)\)/g)].map((m) => m[1].split(", "));
    if (files.every((f) => lists.some((l) => l.includes(f)))) return;
    if (Date.now() > deadline) throw new Error(`no reload of ${files.join(", ")} within ${ms} ms; \`citizen-site dev\` said:\n${said(mark).slice(-4000)}`);
    await sleep(5);
  }
}

after(async () => {
  await dev?.stop();
  if (tree) fs.rmSync(tree, { recursive: true, force: true });
});

/** docs/content.md's new page: its component, as an editor saves it. */
const EVENTS_COMPONENT = `import type { PageMeta, PageProps } from "../../lib/types";

export function meta(): PageMeta {
  return { title: "Events — Citizen Wallet", description: "Where community currencies change hands." };
}

export default function Events(_props: PageProps) {
  return <h1 className="text-4xl font-bold">Community events</h1>;
}
`;

test("a post edit appears in the served HTML", async () => {
  change("content/blog/nfc-integration.md", "## ", "Edited in dev: the cards arrive in May.\n\n## ");
  const { body } = await get("/blog/nfc-integration", (s, b) => ok(s) && b.includes("Edited in dev: the cards arrive in May."));
  assert.match(body, /<script type="module" src="\/__dev\/client\.js" data-generation="\d+"><\/script>/, "the page carries the reload script");
});

test("a component edit appears in the served HTML and in the JS bundle", async () => {
  change("client/features/home/Home.tsx", ">Community balance<", ">Neighbourhood balance<");
  const { body } = await get("/", (s, b) => ok(s) && b.includes("Neighbourhood balance"));
  // The page's own chunk (listed for the boot module) has the new text too,
  // so the browser hydrates what the server rendered.
  const chunks = body.match(/ data-modules="([^"]+)"/)[1].split(" ");
  const texts = await Promise.all(chunks.map(async (c) => (await fetch(`${dev.base}${c}`)).text()));
  assert.ok(texts.some((t) => t.includes("Neighbourhood balance")), `no preloaded chunk has the new text: ${chunks}`);
  assert.ok(!texts.some((t) => t.includes(">Community balance<")));
});

test("a Tailwind class edit appears in the HTML, in the stylesheet and in the page's inline CSS", async () => {
  change("client/features/home/Home.tsx", '<p className="mt-2 text-3xl font-bold">124.50</p>', '<p className="mt-2 text-3xl font-bold text-fuchsia-300">124.50</p>');
  const { body } = await get("/", (s, b) => ok(s) && b.includes("text-fuchsia-300"));
  const css = body.match(/ data-stylesheet="([^"]+)"/)[1];
  assert.match(await (await fetch(`${dev.base}${css}`)).text(), /\.text-fuchsia-300\s*\{/);
  // The page's inline CSS has the rule too, as a served page's would.
  assert.match(body.match(/<style>([^]*?)<\/style>/)[1], /\.text-fuchsia-300\s*\{/);
});

test("a new intro-request tag is offered by the form and accepted by the server", async () => {
  change("content/site/intro-tags.json", '"Civic engagement initiative"', '"Civic engagement initiative",\n  "Repair cafés"');
  await get("/contact", (s, b) => ok(s) && b.includes("Repair cafés"));
  const res = await fetch(`${dev.base}/api/save-to-notion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Riverbend", email: "ana@example.org", tags: ["Repair cafés"] }),
  });
  assert.equal(res.status, 200, await res.text());
});

test("a new page's entry saved before its component breaks only that page, which names the file to write", async () => {
  // docs/content.md's order: the entry first. Until the component is
  // there, its page says which file to create and what it exports; every
  // other page is served.
  const feature = path.join(tree, "client/features/events");
  fs.rmSync(feature, { recursive: true, force: true });
  const mark = dev.output.length;
  change("content/routes.json", '"routes": [', '"routes": [\n    { "path": "/events", "page": "Events" },');
  const { body } = await get("/events", (s, b) => s === 500 && b.includes("client/features/events/Events.tsx"), 60_000);
  assert.match(body, /<h1>Component missing<\/h1>/);
  assert.match(body, /<p class="where">content\/routes\.json:4:\d+<\/p>/, "where the entry names the page");
  assert.match(body, /the page Events has no component: create client\/features\/events\/Events\.tsx/);
  assert.match(body, /a default export/);
  assert.match(body, /`meta`/);
  assert.doesNotMatch(body, /pages\.eager\.ts/);
  for (const p of ["/", "/blog", "/wallets", "/about"]) assert.equal((await fetch(`${dev.base}${p}`)).status, 200, p);
  assert.match(said(mark), /Component missing: content\/routes\.json:4:\d+: the page Events has no component: create client\/features\/events\/Events\.tsx/);

  // Saved as an editor saves it, folder and file at once: the page renders.
  fs.mkdirSync(feature, { recursive: true });
  fs.writeFileSync(
    path.join(feature, "Events.tsx"),
    EVENTS_COMPONENT,
  );
  await get("/events", (s, b) => ok(s) && b.includes("Community events</h1>"), 60_000);
  assert.equal((await fetch(`${dev.base}/`)).status, 200);
});

test("a new page, its component and then its entry, is served without a restart", async () => {
  // docs/content.md's "Adding a page": no data, so no compiler and no restart.
  // The component stays after the test: without its entry, nothing imports it.
  const feature = path.join(tree, "client/features/events");
  fs.mkdirSync(feature, { recursive: true });
  fs.writeFileSync(
    path.join(feature, "Events.tsx"),
    EVENTS_COMPONENT,
  );
  change("content/routes.json", '"routes": [', '"routes": [\n    { "path": "/events", "page": "Events" },');
  await get("/events", (s, b) => ok(s) && b.includes("Community events</h1>") && b.includes('"page":"Events"'), 60_000);
  const data = await fetch(`${dev.base}/api/route-data?url=/events`);
  assert.deepEqual(await data.json(), { status: 200, page: "Events" });
});

test("a syntax error shows the error page with file, line and message; the fix recovers", async () => {
  const mark = dev.output.length;
  change("client/features/blog/Blog.tsx", "export default function Blog(", "export default functio Blog(");
  const { body } = await get("/blog", (s) => s === 500);
  assert.match(body, /<h1>Build failed<\/h1>/);
  assert.match(body, /<p class="where">client\/features\/blog\/Blog\.tsx:\d+:\d+<\/p>/);
  assert.match(body, /Expected &quot;;&quot; but found &quot;Blog&quot;/);
  assert.match(body, /export default functio Blog/, "the line at fault");
  assert.match(body, /src="\/__dev\/client\.js"/, "the error page reloads itself after the fix");
  // The server runs on: other pages and the API answer as before.
  assert.equal((await fetch(`${dev.base}/`)).status, 200);
  assert.equal((await fetch(`${dev.base}/healthz`)).status, 200);
  assert.equal((await fetch(`${dev.base}/api/route-data?url=/about`)).status, 200);
  // The terminal says the same.
  assert.match(said(mark), /Build failed: client\/features\/blog\/Blog\.tsx:\d+:\d+: Expected ";" but found "Blog"/);

  fs.writeFileSync(path.join(tree, "client/features/blog/Blog.tsx"), originals.get("client/features/blog/Blog.tsx"));
  const fixed = await get("/blog", ok);
  assert.match(fixed.body, /Featured Post/);
});

test("a bad import names the importing file", async () => {
  change("client/features/blog/Blog.tsx", '"../../components/Bands"', '"../../components/Bandz"');
  const { body } = await get("/blog", (s) => s === 500);
  assert.match(body, /client\/features\/blog\/Blog\.tsx:\d+:\d+/);
  assert.match(body, /Could not resolve &quot;\.\.\/\.\.\/components\/Bandz&quot;/);
});

test("a render that throws shows where in the sources", async () => {
  const mark = dev.output.length;
  change(
    "client/features/about/About.tsx",
    "export default function About({ data, state }: PageProps<AboutData>) {\n",
    'function fail(): never {\n  throw new Error("the team grid broke");\n}\nexport default function About({ data, state }: PageProps<AboutData>) {\n  fail();\n',
  );
  const line = fs.readFileSync(path.join(tree, "client/features/about/About.tsx"), "utf8").split("\n").findIndex((l) => l.includes("the team grid broke")) + 1;
  const { body } = await get("/about", (s) => s === 500);
  assert.match(body, /<h1>Render failed<\/h1>/);
  assert.match(body, new RegExp(`<p class="where">client/features/about/About\\.tsx:${line}:\\d+</p>`));
  assert.match(body, /Error: the team grid broke/);
  assert.equal((await fetch(`${dev.base}/blog`)).status, 200, "other pages still render");
  assert.match(said(mark), new RegExp(`Render failed: client/features/about/About\\.tsx:${line}:\\d+: Error: the team grid broke`));
});

test("a malformed post or community file names the file and line; other pages are served", async () => {
  change("content/blog/brussels-workshop.md", 'date = "2024-06-12"', 'date = "12 June"');
  let { body } = await get("/blog", (s) => s === 500);
  assert.match(body, /<h1>Content error<\/h1>/);
  assert.match(body, /<p class="where">content\/blog\/brussels-workshop\.md:4:1<\/p>/);
  assert.match(body, /date &quot;12 June&quot; is neither a day \(2026-12-01\) nor a date and time with its offset/);
  assert.equal((await fetch(`${dev.base}/`)).status, 200);

  change("content/communities/brussels-pay.json", '"alias": "brussels-pay",', '"alias": "brussels-pay"');
  ({ body } = await get("/wallets", (s) => s === 500));
  assert.match(body, /<p class="where">content\/communities\/brussels-pay\.json:\d+:\d+<\/p>/);
  assert.equal((await fetch(`${dev.base}/about`)).status, 200);
});

test("a draft post is listed and reachable in dev", async () => {
  const title = "Launching Your Community Currency: A Checklist";
  const list = await get("/blog", ok);
  assert.ok(list.body.includes(title), "listed");
  assert.match(list.body, />Draft</, "marked as a draft");
  const post = await get("/blog/launch-checklist", ok);
  assert.match(post.body, new RegExp(`<h1[^>]*>${title}</h1>`));
  assert.ok((await (await fetch(`${dev.base}/sitemap.xml`)).text()).includes("/blog/launch-checklist"));
  assert.ok((await (await fetch(`${dev.base}/feed.xml`)).text()).includes(title));
});

test("a post dated ahead is listed and readable in dev, marked with its time", async () => {
  const title = "Tap to Pay: NFC Cards Come to Citizen Wallet";
  change("content/blog/nfc-integration.md", 'date = "2024-03-15"', 'date = "2999-12-07T09:00:00+01:00"');
  const label = /Scheduled: December 7, 2999, 09:00 UTC\+01:00/;
  const list = await get("/blog", (s, body) => ok(s) && label.test(body));
  assert.ok(list.body.includes(title), "listed");
  // Newest first: the featured post, before every other.
  assert.ok(list.body.indexOf(title) < list.body.indexOf("Brussels Pay Is Live"), "first");
  const post = await get("/blog/nfc-integration", ok);
  assert.match(post.body, label, "marked on its page");
  assert.match(post.body, new RegExp(`<h1[^>]*>${title}</h1>`));
  assert.ok((await (await fetch(`${dev.base}/sitemap.xml`)).text()).includes("/blog/nfc-integration"));
  // A day alone is its start in UTC.
  change("content/blog/nfc-integration.md", 'date = "2999-12-07T09:00:00+01:00"', 'date = "2999-12-07"');
  await get("/blog/nfc-integration", (s, body) => ok(s) && /Scheduled: December 7, 2999, 00:00 UTC</.test(body));
});

test("an open page reloads by itself after an edit and shows the new text", async () => {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const problems = watchConsole(page);
    await page.goto(`${dev.base}/`, { waitUntil: "networkidle" });
    await page.evaluate(() => {
      window.__before = true;
    });
    change("client/features/home/content.ts", '"The wallet for your community currency"', '"The wallet for your street\'s currency"');
    await page.getByRole("heading", { level: 1, name: "The wallet for your street's currency" }).waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__before), undefined, "a new document: the page reloaded");
    assert.deepEqual(problems, [], "no console errors or CSP violations");
  } finally {
    await browser.close();
  }
});

test("while a file is broken, links load the page from the server, which shows the problem", async () => {
  change("content/blog/brussels-workshop.md", 'date = "2024-06-12"', 'date = "12 June"');
  await get("/blog", (s) => s === 500);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${dev.base}/about`, { waitUntil: "networkidle" });
    await page.waitForSelector('html[data-dev-problems="1"]', { timeout: 30_000 });
    // Client-side navigation would show the blog's last good data; the
    // click loads /blog from the server instead.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Blog" }).click();
    await page.getByRole("heading", { name: "Content error" }).waitFor({ timeout: 30_000 });
    assert.match(await page.textContent(".where"), /content\/blog\/brussels-workshop\.md:4:1/);
  } finally {
    await browser.close();
  }
});
