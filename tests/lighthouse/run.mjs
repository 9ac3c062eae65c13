// Lighthouse (mobile settings, Debian's Chromium) over every route: prints a
// table of the four category scores per route. Exits non-zero when
// Accessibility, Best Practices or SEO is below 100 on any route, when
// Performance is measured and a request blocks a page's first paint, or, on
// a release build, when Performance is below 98 on any route. A debug build
// (the one the test command runs this on) is not measured for Performance
// unless --record asks: its score would say nothing of the site's, and
// leaving it out roughly halves the run.
//
//   node tests/lighthouse/run.mjs --record   (npm run lighthouse)
//
// With --record it writes tests/lighthouse/results.json and docs/search-engines.md's
// table from it. Uses $CITIZEN_SITE_BIN, else target/release or
// target/debug citizen-site.
import fs from "node:fs";
import path from "node:path";
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";
import { execFileSync, spawn } from "node:child_process";
import os from "node:os";
import { startServer } from "../e2e/harness.mjs";
import { PERFORMANCE_TARGET, writeReadme } from "../../bench/report.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const ROUTES = JSON.parse(fs.readFileSync(path.join(root, "content/routes.json"), "utf8")).routes.map((r) =>
  r.path.replace(":postId", "nfc-integration"),
);
const GATED = ["accessibility", "best-practices", "seo"];

if (!process.env.CITIZEN_SITE_BIN) {
  const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "target");
  const release = path.join(target, "release/citizen-site");
  if (fs.existsSync(release)) process.env.CITIZEN_SITE_BIN = release;
}
const RECORD = process.argv.includes("--record");
// The `profiling` build is the release build with its symbols: the same code.
const RELEASE = /\/(release|profiling)\/[^/]+$/.test(process.env.CITIZEN_SITE_BIN ?? "");
// Performance is measured where it means something (or is recorded).
const MEASURED = RELEASE || RECORD ? ["performance", ...GATED] : GATED;
// Lighthouse cannot run twice at once in one Node process, and two runs at
// once skew each other's Performance; the gated categories read the page
// once it has loaded, and Lighthouse spends most of a run waiting for the
// network and the CPU to go quiet. So without Performance the routes are
// shared between WORKERS processes, each with its own Chromium; with it,
// one process measures them one after another.
const WORKERS = MEASURED.includes("performance") ? 1 : Number(process.env.LIGHTHOUSE_WORKERS ?? 2);

/** One worker: its routes, measured one after another in its own Chromium;
 *  prints one JSON line per route. */
async function worker({ base, routes }) {
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    chromeFlags: [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  try {
    for (const route of routes) console.log(JSON.stringify(await measure(chrome, base, route)));
  } finally {
    await chrome.kill();
  }
}

// A run in which Lighthouse itself failed (lhr.runtimeError, or an audit
// that errored, which leaves its category's score null) measured nothing:
// it is run again, up to ATTEMPTS times, and a route that never measures
// fails the gate with Lighthouse's own error messages.
const ATTEMPTS = 3;
function runErrors(lhr) {
  // A runtime error (NO_NAVSTART, NO_FCP...) fails every trace-based audit
  // too: its one line says it all.
  if (lhr.runtimeError) return [`${lhr.runtimeError.code}: ${lhr.runtimeError.message}`];
  const errors = [];
  for (const [id, category] of Object.entries(lhr.categories)) {
    if (category.score !== null) continue;
    const before = errors.length;
    for (const ref of category.auditRefs) {
      const audit = lhr.audits[ref.id];
      if (audit.scoreDisplayMode === "error") errors.push(`${id}: ${audit.id} errored: ${audit.errorMessage}`);
    }
    if (errors.length === before) errors.push(`${id}: no score`);
  }
  return errors;
}

/** A route's row of scores, and the audits that kept a gated one below 100
 *  (or Lighthouse's errors when no attempt measured). */
async function measure(chrome, base, route) {
  let errors = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { lhr } = await lighthouse(`${base}${route}`, { port: chrome.port, output: "json", logLevel: "error", formFactor: "mobile", onlyCategories: MEASURED });
    errors = runErrors(lhr);
    if (errors.length) {
      console.error(`${route}: Lighthouse run ${attempt} of ${ATTEMPTS} did not measure:\n  ${errors.join("\n  ")}`);
      continue;
    }
    const c = lhr.categories;
    const score = (id) => (c[id] ? Math.round(c[id].score * 100) : "not measured");
    const row = { route, performance: score("performance"), accessibility: score("accessibility"), "best-practices": score("best-practices"), seo: score("seo") };
    const below = [];
    // Nothing may hold the first paint back (server/css/):
    // both of Lighthouse's audits of it list no request.
    for (const id of ["render-blocking-resources", "render-blocking-insight"]) {
      for (const item of lhr.audits[id]?.details?.items ?? []) below.push(`${route} performance: ${id} lists ${item.url}`);
    }
    for (const id of GATED.filter((id) => row[id] < 100)) {
      for (const ref of c[id].auditRefs) {
        const a = lhr.audits[ref.id];
        if (a.score !== null && a.score < 1 && ref.weight > 0) below.push(`${route} ${id}: ${a.id} ${a.title}`);
      }
    }
    return { row, below };
  }
  return { route, errors };
}

/** WORKERS processes over the routes (each takes every WORKERS-th); the
 *  results in the routes' order. */
async function measureAll(base) {
  const jobs = Array.from({ length: WORKERS }, (_, w) => ROUTES.filter((_, i) => i % WORKERS === w));
  const outputs = await Promise.all(
    jobs.filter((routes) => routes.length).map(
      (routes) =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "--worker", ...process.argv.slice(2)], {
            env: { ...process.env, LIGHTHOUSE_JOB: JSON.stringify({ base, routes }) },
            stdio: ["ignore", "pipe", "inherit"],
          });
          let out = "";
          child.stdout.on("data", (d) => (out += d));
          child.on("error", reject);
          child.on("exit", (code) => {
            const results = out.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
            if (code !== 0 && results.length < routes.length) reject(new Error(`a Lighthouse worker exited with ${code} after ${results.length} of ${routes.length} routes`));
            else resolve(results);
          });
        }),
    ),
  );
  const byRoute = new Map(outputs.flat().map((r) => [r.row?.route ?? r.route, r]));
  return ROUTES.map((route) => byRoute.get(route));
}

if (process.argv.includes("--worker")) {
  await worker(JSON.parse(process.env.LIGHTHOUSE_JOB));
  process.exit(0);
}

const server = await startServer();
const rows = [];
let failed = false;
try {
  for (const result of await measureAll(server.base)) {
    if (result.errors) {
      failed = true;
      console.error(`${result.route}: no Lighthouse run measured in ${ATTEMPTS} attempts; the last said:\n  ${result.errors.join("\n  ")}`);
      rows.push({ route: result.route, performance: "error", accessibility: "error", "best-practices": "error", seo: "error" });
      continue;
    }
    for (const line of result.below) console.error(line);
    failed ||= result.below.length > 0 || GATED.some((id) => result.row[id] < 100);
    rows.push(result.row);
  }
} finally {
  server.stop();
}
console.log("| route | Performance | Accessibility | Best Practices | SEO |\n| --- | --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.route} | ${r.performance} | ${r.accessibility} | ${r["best-practices"]} | ${r.seo} |`);
const slow = rows.filter((r) => !(r.performance >= PERFORMANCE_TARGET)).map((r) => r.route);
if (MEASURED.includes("performance")) {
  console.log(slow.length ? `Performance below ${PERFORMANCE_TARGET} on: ${slow.join(", ")}` : `Performance at least ${PERFORMANCE_TARGET} on every route.`);
}
if (RELEASE && slow.length) {
  failed = true;
  console.log(`Lighthouse: FAILED (a release build must score at least ${PERFORMANCE_TARGET} on Performance everywhere)`);
} else if (!RELEASE) {
  console.log(RECORD ? "(a debug build: Performance is reported, not gated)" : "(a debug build: Performance is not measured; a release build or --record measures it)");
}
console.log(failed ? "Lighthouse: FAILED" : "Lighthouse: Accessibility, Best Practices and SEO are 100 on every route.");
if (RECORD) {
  const results = {
    date: new Date().toISOString().slice(0, 10),
    build: RELEASE ? (/\/profiling\//.test(process.env.CITIZEN_SITE_BIN) ? "profiling (release with symbols)" : "release") : "debug",
    cores: os.cpus().length,
    chromium: execFileSync(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", ["--version"], { encoding: "utf8" }).trim().replace(/^Chromium /, ""),
    lighthouse: JSON.parse(fs.readFileSync(path.join(root, "node_modules/lighthouse/package.json"), "utf8")).version,
    routes: rows,
  };
  fs.writeFileSync(path.join(root, "tests/lighthouse/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeReadme();
  console.log("wrote tests/lighthouse/results.json and docs/search-engines.md's table");
}
process.exit(failed ? 1 : 0);
