// Lighthouse (mobile settings, Debian's Chromium) over every route: prints a
// table of the four category scores per route. Exits non-zero when
// Accessibility, Best Practices or SEO is below 100 on any route, when a
// request blocks a page's first paint, or when Performance is below
// PERFORMANCE_TARGET (100, bench/report.mjs) on any route. Lighthouse's
// Performance varies from run to run on one build (its own
// docs/variability.md, which finds the median of five runs about twice as
// stable as one): a route below the target at its first run is measured
// four more times and judged by the median of its five runs.
// The phone is the same on every host (tests/lighthouse/device.mjs): the
// CPU slowdown is calibrated once, from Lighthouse's own benchmark run in
// the Chromium measured, before the first route.
// The server's build does not enter into it: every page is rendered into
// the cache before the server says it is ready, and the pages, the
// stylesheet and the modules are the same bytes in a debug build as in a
// release build.
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
import { execFileSync } from "node:child_process";
import os from "node:os";
import { startServer } from "../e2e/harness.mjs";
import { PERFORMANCE_TARGET, writeReadme } from "../../bench/report.mjs";
import { PHONE_INDEX, busyProcesses, calibrate, throttlingFlags } from "./device.mjs";

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
const BIN = process.env.CITIZEN_SITE_BIN ?? "";
const RECORD = process.argv.includes("--record");
const MEASURED = ["performance", ...GATED];
/** Runs of a route whose first run scored below PERFORMANCE_TARGET: its
 *  Performance is their median. */
const PERFORMANCE_RUNS = 5;

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

/** One Lighthouse run of a route: its row of scores, the audits that kept
 *  a gated category below 100, the metrics that cost Performance points (or
 *  Lighthouse's errors when no attempt measured). */
async function measureOnce(chrome, device, base, route) {
  let errors = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { lhr } = await lighthouse(`${base}${route}`, { port: chrome.port, output: "json", logLevel: "error", formFactor: "mobile", onlyCategories: MEASURED, ...throttlingFlags(device) });
    errors = runErrors(lhr);
    // The phone is the calibrated one, or the run measured another.
    const applied = lhr.configSettings.throttling.cpuSlowdownMultiplier;
    if (applied !== device.cpuSlowdownMultiplier) errors.push(`Lighthouse ran at a CPU slowdown of ${applied}x, not the calibrated ${device.cpuSlowdownMultiplier}x`);
    if (errors.length) {
      console.error(`${route}: Lighthouse run ${attempt} of ${ATTEMPTS} did not measure:\n  ${errors.join("\n  ")}`);
      continue;
    }
    const c = lhr.categories;
    const score = (id) => Math.round(c[id].score * 100);
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
    // What a Performance below 100 lost its points on: each weighed metric
    // under a full score, with its value.
    const costs = c.performance.auditRefs
      .filter((ref) => ref.weight > 0 && lhr.audits[ref.id].score < 1)
      .map((ref) => `${ref.id} ${lhr.audits[ref.id].displayValue} (score ${lhr.audits[ref.id].score})`);
    // The host's speed as this run found it, beside the calibration's.
    costs.push(`the run's own benchmark index ${Math.round(lhr.environment.benchmarkIndex)}`);
    return { row, below, costs };
  }
  return { route, errors };
}

/** A route measured: once, and where its Performance is below the target,
 *  PERFORMANCE_RUNS times in all, its Performance their median (the row
 *  lists every run's). */
async function measure(chrome, device, base, route) {
  const runs = [await measureOnce(chrome, device, base, route)];
  if (runs[0].errors) return runs[0];
  if (runs[0].row.performance < PERFORMANCE_TARGET) {
    while (runs.length < PERFORMANCE_RUNS) {
      const run = await measureOnce(chrome, device, base, route);
      if (run.errors) return run;
      runs.push(run);
    }
  }
  const ordered = [...runs].sort((a, b) => a.row.performance - b.row.performance);
  const median = ordered[Math.floor(ordered.length / 2)];
  const row = { ...median.row, ...(runs.length > 1 ? { performanceRuns: runs.map((r) => r.row.performance) } : {}) };
  const below = [...new Set(runs.flatMap((r) => r.below))];
  if (row.performance < PERFORMANCE_TARGET) {
    below.push(`${route} performance: ${row.performance} (median of ${runs.map((r) => r.row.performance).join(", ")}); the median run lost points on: ${median.costs.join("; ")}`);
  }
  return { row, below };
}

/** Every route, one after another in one Chromium (two runs at once would
 *  skew each other's Performance). */
async function measureAll(base) {
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    chromeFlags: [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  try {
    const busy = await busyProcesses();
    const device = await calibrate(chrome.port);
    console.error(
      `the phone: benchmark index ${PHONE_INDEX}; this host ${device.benchmarkIndex} (median of ${device.samples.join(", ")}), so a CPU slowdown of ${device.cpuSlowdownMultiplier}x; ` +
        `busy beside it: ${busy.join(", ") || "nothing"}`,
    );
    const results = [];
    for (const route of ROUTES) results.push(await measure(chrome, device, base, route));
    return { device, results };
  } finally {
    await chrome.kill();
  }
}

const server = await startServer();
const rows = [];
let failed = false;
let device;
try {
  const measured = await measureAll(server.base);
  device = measured.device;
  for (const result of measured.results) {
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
failed ||= slow.length > 0;
console.log(slow.length ? `Performance below ${PERFORMANCE_TARGET} on: ${slow.join(", ")}` : `Performance ${PERFORMANCE_TARGET} on every route.`);
console.log(failed ? "Lighthouse: FAILED" : `Lighthouse: Performance, Accessibility, Best Practices and SEO 100 on every route, nothing render-blocking.`);
if (RECORD) {
  const results = {
    date: new Date().toISOString().slice(0, 10),
    build: /\/profiling\/[^/]+$/.test(BIN) ? "profiling (release with symbols)" : /\/release\/[^/]+$/.test(BIN) ? "release" : "debug",
    cores: os.cpus().length,
    chromium: execFileSync(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", ["--version"], { encoding: "utf8" }).trim().replace(/^Chromium /, ""),
    lighthouse: JSON.parse(fs.readFileSync(path.join(root, "node_modules/lighthouse/package.json"), "utf8")).version,
    phoneIndex: PHONE_INDEX,
    benchmarkIndex: device.benchmarkIndex,
    cpuSlowdownMultiplier: device.cpuSlowdownMultiplier,
    routes: rows,
  };
  fs.writeFileSync(path.join(root, "tests/lighthouse/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeReadme();
  console.log("wrote tests/lighthouse/results.json and docs/search-engines.md's table");
}
process.exit(failed ? 1 : 0);
