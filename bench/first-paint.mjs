// First paint: what carrying each page's CSS inline (server/css/)
// changed for a first visit on a phone with a weak signal. Two sites, each
// binary's own build served as it ships: "before" (the commit that linked
// the one stylesheet in every head) and "after" (this one). Per route (the
// post route with the longest post):
//
//   - the HTML as sent with brotli, in bytes, against the 14,600 of a new
//     TCP connection's first flight;
//   - Lighthouse (mobile defaults: simulated slow 4G and a 4x slower CPU,
//     Performance alone), BENCH_FIRST_PAINT_LIGHTHOUSE_RUNS times (default
//     1): First and Largest Contentful Paint, its score, and the requests
//     it calls render-blocking (medians);
//   - a real Chromium, its network throttled as Lighthouse's simulation
//     assumes (150 ms round trip, 1.6 Mbit/s down, 750 kbit/s up) and its
//     CPU 4x slower, a cold load in a fresh context,
//     BENCH_FIRST_PAINT_CHROMIUM_RUNS times (default 3): the
//     `first-contentful-paint` and `largest-contentful-paint` entries
//     (medians).
//
// And, where valgrind and a `profiling` build (release with symbols,
// BENCH_PROFILING_BIN or the target's) are there, what choosing a page's
// CSS costs per render: the instructions of `Stylesheet::for_markup`
// (with what it calls) against all of the process's for the same page
// made with the page cache off (every request renders), counted by
// callgrind over every route.
//
//   BENCH_BEFORE_BIN=/var/tmp/before-target/debug/citizen-site \
//   node bench/first-paint.mjs [--record]
//
// BENCH_BEFORE_BIN is the binary of the commit before (git archive
// 5e972ae | tar -x -C /tmp/before; `cargo build` there, a target
// directory of its own), BENCH_BEFORE_COMMIT names it (default 5e972ae).
// The after binary is $CITIZEN_SITE_BIN, else the target directory's
// release build, else its debug build. With --record the run is written to
// bench/results.json (rows.firstPaint) and the README's table.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";
import { freePort, root, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { median, recordRow } from "./report.mjs";

const RECORD = process.argv.includes("--record");
const LIGHTHOUSE_RUNS = Number(process.env.BENCH_FIRST_PAINT_LIGHTHOUSE_RUNS ?? 1);
const CHROMIUM_RUNS = Number(process.env.BENCH_FIRST_PAINT_CHROMIUM_RUNS ?? 3);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
/** Lighthouse's mobile throttling, applied for real: its RTT, throughput and CPU slowdown. */
export const WEAK_SIGNAL = { latencyMs: 150, downloadKbps: 1638.4, uploadKbps: 750, cpuSlowdown: 4 };
const PHONE = { viewport: { width: 412, height: 823 }, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true };

/** The routes of content/routes.json, the post route with the longest post. */
function routes() {
  const blog = path.join(root, "content/blog");
  const longest = fs
    .readdirSync(blog)
    .filter((f) => f.endsWith(".md"))
    .sort((a, b) => fs.statSync(path.join(blog, b)).size - fs.statSync(path.join(blog, a)).size)[0]
    .slice(0, -3);
  return JSON.parse(fs.readFileSync(path.join(root, "content/routes.json"), "utf8")).routes.map((r) => r.path.replace(":postId", longest));
}

/** The after binary: $CITIZEN_SITE_BIN, else the target's release, else debug. */
function afterBinary() {
  if (process.env.CITIZEN_SITE_BIN) return process.env.CITIZEN_SITE_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "target");
  for (const profile of ["release", "debug"]) {
    const bin = path.join(target, profile, "citizen-site");
    if (fs.existsSync(bin)) return bin;
  }
  throw new Error(`no citizen-site binary under ${target}: cargo build (or set CITIZEN_SITE_BIN)`);
}
const profileOf = (bin) => (/\/release\/[^/]+$/.test(bin) ? "release" : /\/debug\/[^/]+$/.test(bin) ? "debug" : "unknown");

function afterCommit() {
  try {
    const git = (...args) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const inputs = ["client", "ssr-bundle", "content", "server", "build.rs", "Cargo.toml", "Cargo.lock", "package-lock.json"];
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--", ...inputs) ? " + changes" : ""}`;
  } catch {
    return "unknown";
  }
}

/** `bin` served on a free port until ready. */
async function serve(bin, env = {}, options = {}) {
  const port = await freePort();
  const child = startSite(bin, port, env, options);
  const exited = new Promise((resolve) => child.on("exit", resolve));
  await Promise.race([
    waitFor(`http://127.0.0.1:${port}/readyz`, 600_000),
    exited.then((code) => {
      throw new Error(`${bin} exited (${code}) before it was ready`);
    }),
  ]);
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    child,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The bytes of `route`'s HTML as sent to a browser that takes brotli. */
function brotliBytes(base, route) {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${route}`, { headers: { "accept-encoding": "br" } }, (res) => {
        let n = 0;
        res.on("data", (d) => (n += d.length));
        res.on("end", () => (res.headers["content-encoding"] === "br" ? resolve(n) : reject(new Error(`${route}: not brotli`))));
      })
      .on("error", reject);
  });
}

/** Lighthouse's FCP, LCP, score and render-blocking requests for each route (medians of the runs). */
async function lighthouseRuns(base, list) {
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: FLAGS });
  const out = {};
  try {
    for (const route of list) {
      const runs = [];
      while (runs.length < LIGHTHOUSE_RUNS) {
        const { lhr } = await lighthouse(`${base}${route}`, { port: chrome.port, output: "json", logLevel: "error", formFactor: "mobile", onlyCategories: ["performance"] });
        if (lhr.runtimeError || lhr.categories.performance.score === null) {
          console.error(`${route}: Lighthouse did not measure (${lhr.runtimeError?.code ?? "no score"}); again`);
          continue;
        }
        runs.push({
          fcpMs: lhr.audits["first-contentful-paint"].numericValue,
          lcpMs: lhr.audits["largest-contentful-paint"].numericValue,
          score: Math.round(lhr.categories.performance.score * 100),
          blocking: (lhr.audits["render-blocking-resources"]?.details?.items ?? []).length,
        });
      }
      out[route] = {
        fcpMs: Math.round(median(runs.map((r) => r.fcpMs))),
        lcpMs: Math.round(median(runs.map((r) => r.lcpMs))),
        score: median(runs.map((r) => r.score)),
        blocking: median(runs.map((r) => r.blocking)),
      };
      console.error(`lighthouse ${base}${route}: ${JSON.stringify(out[route])}`);
    }
  } finally {
    await chrome.kill();
  }
  return out;
}

/** FCP and LCP of a cold load of each route in Chromium on a weak signal (medians of the runs). */
async function chromiumRuns(browser, base, list) {
  const out = {};
  for (const route of list) {
    const runs = [];
    for (let i = 0; i < CHROMIUM_RUNS; i++) {
      const context = await browser.newContext(PHONE);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: WEAK_SIGNAL.latencyMs,
        downloadThroughput: (WEAK_SIGNAL.downloadKbps * 1024) / 8,
        uploadThroughput: (WEAK_SIGNAL.uploadKbps * 1024) / 8,
      });
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: WEAK_SIGNAL.cpuSlowdown });
      await page.goto(`${base}${route}`, { waitUntil: "load" });
      // LCP is final once the page has been still for a moment; read it then.
      await page.waitForTimeout(1000);
      runs.push(
        await page.evaluate(
          () =>
            new Promise((resolve) => {
              const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
              new PerformanceObserver((list) => {
                const entries = list.getEntries();
                resolve({ fcpMs: fcp, lcpMs: entries[entries.length - 1]?.startTime ?? null });
              }).observe({ type: "largest-contentful-paint", buffered: true });
              setTimeout(() => resolve({ fcpMs: fcp, lcpMs: null }), 2000);
            }),
        ),
      );
      await context.close();
    }
    out[route] = {
      fcpMs: Math.round(median(runs.map((r) => r.fcpMs))),
      lcpMs: Math.round(median(runs.map((r) => r.lcpMs ?? r.fcpMs))),
    };
    console.error(`chromium ${base}${route}: ${JSON.stringify(out[route])}`);
  }
  return out;
}

/** One site measured: every route's bytes, Lighthouse and Chromium. */
async function measure(bin, commit, list, browser) {
  const site = await serve(bin);
  try {
    const bytes = {};
    for (const route of list) bytes[route] = await brotliBytes(site.base, route);
    const lh = await lighthouseRuns(site.base, list);
    const real = await chromiumRuns(browser, site.base, list);
    return {
      commit,
      build: profileOf(bin),
      routes: list.map((route) => ({ route, brotliBytes: bytes[route], lighthouse: lh[route], chromium: real[route] })),
    };
  } finally {
    await site.stop();
  }
}

/** The profiling binary, if there is one. */
function profilingBinary() {
  if (process.env.BENCH_PROFILING_BIN) return process.env.BENCH_PROFILING_BIN;
  const bin = path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "profiling", "citizen-site");
  return fs.existsSync(bin) ? bin : null;
}

/** Instructions per render of each route, and of `for_markup` within it:
 *  the site under callgrind with its page cache off, each route asked
 *  RENDERS times after a first request (the isolate warm), the counters
 *  zeroed before and dumped after. */
async function perRender(bin, list) {
  const RENDERS = 20;
  const dir = tempDir("citizen-first-paint-");
  const out = path.join(dir, "callgrind.out");
  const site = await serve(bin, { PAGE_CACHE_CAPACITY: "0", CONNECTION_WORKERS: "1", SSR_WORKERS: "1", SSR_DEADLINE_MS: "60000" }, {
    wrap: ["valgrind", "--tool=callgrind", `--callgrind-out-file=${out}`, "--dump-instr=no", "--collect-atstart=yes"],
    stdio: ["ignore", "ignore", "ignore"],
  });
  try {
    const rows = [];
    for (const route of list) {
      await brotliBytes(site.base, route).catch(() => {});
      execFileSync("callgrind_control", ["-z", String(site.child.pid)], { stdio: "ignore" });
      for (let i = 0; i < RENDERS; i++) {
        await new Promise((resolve, reject) =>
          http.get(`${site.base}${route}`, (res) => res.resume().on("end", resolve)).on("error", reject),
        );
      }
      execFileSync("callgrind_control", ["-d", String(site.child.pid)], { stdio: "ignore" });
      const dump = fs
        .readdirSync(dir)
        .filter((f) => f.startsWith("callgrind.out"))
        .map((f) => path.join(dir, f))
        .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
      const annotated = execFileSync("callgrind_annotate", ["--inclusive=yes", "--threshold=100", dump], { encoding: "utf8", maxBuffer: 1 << 28 });
      const total = Number(annotated.match(/([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS/)?.[1]?.replaceAll(",", "") ?? NaN);
      const line = annotated.split("\n").find((l) => l.includes("citizen_site::css::Stylesheet::for_markup"));
      const css = Number(line?.trim().split(/\s+/)[0].replaceAll(",", "") ?? NaN);
      rows.push({ route, instructions: Math.round(total / RENDERS), css: Math.round(css / RENDERS) });
      fs.rmSync(dump);
      console.error(`per render ${route}: ${JSON.stringify(rows.at(-1))}`);
    }
    return { renders: RENDERS, valgrind: execFileSync("valgrind", ["--version"], { encoding: "utf8" }).trim(), routes: rows };
  } finally {
    await site.stop();
  }
}

// BENCH_FIRST_PAINT_ROUTES=/,/blog: those alone (a quick look; never recorded).
const only = process.env.BENCH_FIRST_PAINT_ROUTES?.split(",");
if (only && RECORD) throw new Error("a run of some routes is not recorded: unset BENCH_FIRST_PAINT_ROUTES");
const list = only ?? routes();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS.filter((f) => f !== "--headless=new") });
const run = {
  date: new Date().toISOString().slice(0, 10),
  cores: os.cpus().length,
  chromium: execFileSync(CHROMIUM, ["--version"], { encoding: "utf8" }).trim().replace(/^Chromium /, ""),
  lighthouse: JSON.parse(fs.readFileSync(path.join(root, "node_modules/lighthouse/package.json"), "utf8")).version,
  network: WEAK_SIGNAL,
  lighthouseRuns: LIGHTHOUSE_RUNS,
  chromiumRuns: CHROMIUM_RUNS,
  firstFlightBytes: 14_600,
};
try {
  if (process.env.BENCH_BEFORE_BIN) run.before = await measure(process.env.BENCH_BEFORE_BIN, process.env.BENCH_BEFORE_COMMIT ?? "5e972ae", list, browser);
  run.after = await measure(afterBinary(), afterCommit(), list, browser);
} finally {
  await browser.close();
}
const profiling = profilingBinary();
if (profiling && fs.existsSync("/usr/bin/valgrind")) {
  // A failure here loses nothing measured above: the run is recorded without it.
  try {
    run.perRender = { build: "profiling", ...(await perRender(profiling, list)) };
  } catch (e) {
    console.error(`per-render cost: not measured: ${e.message}`);
  }
} else console.error("per-render cost: not measured (needs valgrind and the profiling build: cargo build --profile profiling)");

for (const r of run.after.routes) {
  const b = run.before?.routes.find((x) => x.route === r.route);
  const pair = (get) => `${b ? get(b) : "-"} -> ${get(r)}`;
  console.log(
    `${r.route.padEnd(28)} br ${pair((x) => x.brotliBytes)} B  lighthouse FCP ${pair((x) => x.lighthouse.fcpMs)} ms LCP ${pair((x) => x.lighthouse.lcpMs)} ms score ${pair((x) => x.lighthouse.score)}  chromium FCP ${pair((x) => x.chromium.fcpMs)} ms LCP ${pair((x) => x.chromium.lcpMs)} ms`,
  );
}
if (RECORD) {
  recordRow("firstPaint", run);
  console.log("wrote bench/results.json (rows.firstPaint) and the README's table");
}
