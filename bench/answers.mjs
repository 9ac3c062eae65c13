// Every route's answer, recorded so that a restructuring can show it
// changed nothing a client sees: the status, the headers and the decoded
// body of each page (every path of the sitemap, the query variants, the
// 404, the redirects), asset, SEO file, health endpoint and API call, good
// and bad input alike, in each encoding.
//
//   node bench/answers.mjs record OUT.json [--bin PATH]   (default: the release build)
//   node bench/answers.mjs compare BEFORE.json AFTER.json
//
// `record` starts the binary on a fresh SQLite file with a fixed SITE_URL,
// waits until it is ready, and asks each question in turn. What differs
// between two runs of one binary is left out: the `date` and
// `x-request-id` headers, and the figures, length and order of `/readyz`
// and `/metrics` (the names of their series are kept). `compare` prints each answer that differs and
// exits 1 if any does. The usual loop: record with the commit before the
// change, record with the change, compare.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import zlib from "node:zlib";
import { freePort, siteBinary, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";

const SITE_URL = "https://citizenwallet.xyz";
const ENCODINGS = ["identity", "gzip", "br"];
const VARYING_HEADERS = new Set(["date", "x-request-id"]);

function decode(encoding, bytes) {
  if (encoding === "gzip") return zlib.gunzipSync(bytes);
  if (encoding === "br") return zlib.brotliDecompressSync(bytes);
  return bytes;
}

/** The figures of a body whose numbers move between runs of one binary. */
function steady(pathname, text) {
  const figures = (t) => t.replace(/\d+(\.\d+)?(e[-+]?\d+)?/g, "N");
  // The series come in the order of a hash map.
  if (pathname === "/metrics") return [...new Set(figures(text).split("\n"))].sort().join("\n");
  if (pathname === "/readyz") return figures(text);
  return text;
}

/** One request over its own connection, its answer's bytes as sent. */
function raw(base, { method = "GET", path: p, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(base + p, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ res, bytes: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function ask(base, question) {
  const { res, bytes } = await raw(base, question);
  const encoding = res.headers["content-encoding"] ?? "identity";
  const text = steady(new URL(base + question.path).pathname, decode(encoding, bytes).toString("utf8"));
  const kept = {};
  const pathname = new URL(base + question.path).pathname;
  const sized = pathname !== "/metrics" && pathname !== "/readyz";
  for (const name of Object.keys(res.headers).sort()) {
    if (!VARYING_HEADERS.has(name) && (sized || name !== "content-length")) kept[name] = res.headers[name];
  }
  return { status: res.statusCode, headers: kept, body: text };
}

/** The questions: every page and file a visitor, a crawler or a script may ask for. */
async function questions(base) {
  const sitemap = (await raw(base, { path: "/sitemap.xml" })).bytes.toString();
  const pages = [...sitemap.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => new URL(m[1]).pathname);
  const home = (await raw(base, { path: "/" })).bytes.toString();
  const assets = [...new Set([...home.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]))];
  const gets = [
    ...pages,
    ...pages.map((p) => `/api/route-data?url=${encodeURIComponent(p)}`),
    "/blog?type=Announcement", "/blog?type=Nonsense", "/blog?utm_source=x",
    "/pricing?billing=yearly", "/pricing?billing=monthly", "/pricing?billing=weekly",
    "/contact?submitted=1", "/success", "/success?session_id=cs_test_abc123", "/success?session_id=../x",
    "/cancel", "/no-such-page", "/blog/no-such-post", "/about/", "/%61bout", "/blog/", "//about",
    ...assets, "/assets/no-such-file.js",
    "/robots.txt", "/sitemap.xml", "/feed.xml", "/site.webmanifest",
    "/healthz", "/readyz", "/metrics",
    "/api/route-data?url=/about", "/api/route-data?url=/pricing%3Fbilling%3Dyearly", "/api/route-data?url=/nope",
    "/api/route-data", "/api/get-stripe-prices", "/api/no-such-endpoint",
  ];
  const list = [];
  for (const p of gets) for (const enc of ENCODINGS) list.push({ path: p, headers: { "accept-encoding": enc } });
  list.push({ method: "HEAD", path: "/" }, { method: "HEAD", path: "/blog" });
  list.push({ method: "POST", path: "/" }, { method: "DELETE", path: "/about" }, { method: "PUT", path: "/api/save-to-notion" });
  const json = { "content-type": "application/json" };
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const intro = {
    name: "Riverbend", contactPerson: "Ana", email: "ana@example.org", website: "https://example.org",
    description: "A comparison run", tags: ["Loyalty"], submissionId: "7a0f1c2e-1d6b-4d2e-9a51-3c1f8e2b9d10",
  };
  list.push(
    { method: "POST", path: "/api/save-to-notion", headers: json, body: JSON.stringify(intro) },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: JSON.stringify(intro) },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: JSON.stringify({ ...intro, submissionId: undefined, name: "" }) },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: JSON.stringify({ ...intro, submissionId: undefined, email: "nope" }) },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: JSON.stringify({ ...intro, tags: [null] }) },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: "{broken" },
    { method: "POST", path: "/api/save-to-notion", headers: { "content-type": "text/plain" }, body: "hello" },
    { method: "POST", path: "/api/save-to-notion", headers: json, body: "x".repeat(70_000) },
    { method: "POST", path: "/api/save-to-notion", headers: form, body: "name=Canal&contactPerson=Jo&email=jo%40example.org&website=&description=By+form&submissionId=2b1d7a3c-5e4f-4a6b-8c9d-0e1f2a3b4c5d" },
    { method: "POST", path: "/api/save-to-notion", headers: form, body: "name=&email=" },
    { method: "POST", path: "/api/create-checkout-session", headers: json, body: JSON.stringify({ priceId: "price_123" }) },
    { method: "POST", path: "/api/create-checkout-session", headers: json, body: "{}" },
    { method: "POST", path: "/api/create-checkout-session", headers: form, body: "priceId=price_123" },
    { method: "POST", path: "/api/verify-checkout-session", headers: json, body: JSON.stringify({ sessionId: "cs_test_abc123" }) },
    { method: "POST", path: "/api/verify-checkout-session", headers: json, body: JSON.stringify({ sessionId: "bad id" }) },
    { method: "POST", path: "/api/get-stripe-prices", headers: json, body: "{}" },
    { method: "POST", path: "/api/stripe-webhook", headers: json, body: "{}" },
    { method: "POST", path: "/api/stripe-webhook", headers: { ...json, "stripe-signature": "t=1,v1=00" }, body: "{}" },
  );
  return list;
}

async function record(out, bin) {
  const dir = tempDir("answers");
  const port = await freePort();
  const site = startSite(bin, port, {
    SITE_URL,
    DATABASE_URL: `sqlite://${path.join(dir, "site.db")}`,
    RATE_LIMIT_PER_MINUTE: "0",
    SESSION_LOOKUPS_PER_MINUTE: "0",
    STRIPE_SECRET_KEY: "",
    STRIPE_WEBHOOK_SECRET: "whsec_answers",
    NOTION_TOKEN: "",
    RUST_LOG: "warn",
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/readyz`);
    const answers = [];
    for (const q of await questions(base)) answers.push({ question: q, answer: await ask(base, q) });
    fs.writeFileSync(out, JSON.stringify({ binary: bin, answers }, null, 1) + "\n");
    console.log(`${answers.length} answers recorded in ${out}`);
  } finally {
    site.kill("SIGTERM");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function compare(a, b) {
  const before = JSON.parse(fs.readFileSync(a, "utf8")).answers;
  const after = JSON.parse(fs.readFileSync(b, "utf8")).answers;
  let differ = 0;
  before.forEach(({ question, answer }, i) => {
    const q = `${question.method ?? "GET"} ${question.path} ${JSON.stringify(question.headers ?? {})}`;
    if (JSON.stringify(after[i]?.question) !== JSON.stringify(question)) {
      differ++;
      return console.log(`question ${i} is not the same after: ${q}`);
    }
    for (const part of ["status", "headers", "body"]) {
      if (JSON.stringify(answer[part]) !== JSON.stringify(after[i].answer[part])) {
        differ++;
        console.log(`differs (${part}): ${q}\n  before: ${JSON.stringify(answer[part]).slice(0, 400)}\n  after:  ${JSON.stringify(after[i].answer[part]).slice(0, 400)}`);
      }
    }
  });
  if (after.length !== before.length) {
    differ++;
    console.log(`${before.length} questions before, ${after.length} after`);
  }
  console.log(differ ? `${differ} difference(s)` : `no difference in ${before.length} answers`);
  process.exit(differ ? 1 : 0);
}

const [command, ...rest] = process.argv.slice(2);
if (command === "record" && rest[0]) {
  const at = rest.indexOf("--bin");
  await record(rest[0], at >= 0 ? rest[at + 1] : siteBinary());
} else if (command === "compare" && rest[1]) {
  compare(rest[0], rest[1]);
} else {
  console.error("usage: node bench/answers.mjs record OUT.json [--bin PATH] | compare BEFORE.json AFTER.json");
  process.exit(2);
}
