// The edit loop, measured: `node bench/dev.mjs` (or `npm run bench:dev`).
//
// Starts `citizen-site dev` (the release binary) on a temporary copy of the
// checkout and makes three kinds of edit, BENCH_DEV_RUNS times each (5): a
// blog post's text, a string in a page component, and a Tailwind class. For
// each it times the file write until the server returns the new HTML (for the
// class: until the HTML has it and its stylesheet styles it), then as many
// edits again until a page open in Chromium shows it (reloaded by the dev
// script; for the class: with the new computed style), and prints the
// medians next to the peer measured in the same run: `cargo build --release`
// of the same copy after the same edit (BENCH_DEV_REBUILDS times, default 1;
// 0 skips it), the way a release-only workflow shows an edit. The rebuilds
// use their own target dir beside the usual one, built once before timing.
// Writes bench/dev-results.json.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launchBrowser } from "../tests/e2e/harness.mjs";
import { cargoEnv, copyTree, root, siteBinary, startDev, table, until } from "../tests/ops/tools.mjs";

const RUNS = Number(process.env.BENCH_DEV_RUNS ?? 5);
const REBUILDS = Number(process.env.BENCH_DEV_REBUILDS ?? 1);

// Each edit's `apply` makes run n's text, `done` tells whether a served page
// has it, `shows` is [function, argument] telling the same in the browser,
// `undone` whether a page is back to the original. Every run writes something
// new, so no run can be answered by an earlier one.
const EDITS = [
  {
    name: "blog post text",
    target: "< 300 ms",
    limit: 300,
    file: "content/blog/nfc-integration.md",
    apply: (text, n) => text.replace(/\n\+\+\+\n/, `\n+++\n\nBenchmark edit ${n}: the cards arrive next month.\n`),
    url: "/blog/nfc-integration",
    done: async (body, n) => body.includes(`Benchmark edit ${n}: the cards arrive next month.`),
    shows: (n) => [(text) => document.body.textContent.includes(text), `Benchmark edit ${n}: the cards arrive next month.`],
    undone: (body) => !body.includes("Benchmark edit"),
  },
  {
    name: "page component string",
    target: "< 1000 ms",
    limit: 1000,
    file: "client/features/home/Home.tsx",
    apply: (text, n) => text.replace(">Community balance<", `>Community balance ${n}<`),
    url: "/",
    done: async (body, n) => body.includes(`Community balance ${n}<`),
    shows: (n) => [(text) => document.body.textContent.includes(text), `Community balance ${n}`],
    undone: (body) => body.includes(">Community balance<"),
  },
  {
    name: "Tailwind class",
    target: "< 1000 ms",
    limit: 1000,
    file: "client/features/home/Home.tsx",
    apply: (text, n) => text.replace('"mt-2 text-3xl font-bold"', `"mt-2 text-[${40 + n}px] font-bold"`),
    url: "/",
    // The page has the class and its stylesheet has the rule for it.
    done: async (body, n, base) => {
      if (!body.includes(`text-[${40 + n}px]`)) return false;
      const css = body.match(/ data-stylesheet="([^"]+)"/)?.[1];
      return css !== undefined && (await (await fetch(`${base}${css}`)).text()).includes(`text-\\[${40 + n}px\\]`);
    },
    shows: (n) => [
      (px) => {
        const el = document.querySelector(`p.text-\\[${px}px\\]`);
        return el !== null && getComputedStyle(el).fontSize === `${px}px`;
      },
      40 + n,
    ],
    undone: (body) => body.includes('"mt-2 text-3xl font-bold"'),
  },
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The binary under test, copied so that the rebuilds below cannot replace it.
const bin = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "citizen-bench-bin-")), "citizen-site");
fs.copyFileSync(siteBinary(), bin);
fs.chmodSync(bin, 0o755);
const tree = copyTree({ crate: REBUILDS > 0 });
const originals = Object.fromEntries(EDITS.map((e) => [e.file, fs.readFileSync(path.join(tree, e.file), "utf8")]));
const write = (edit, n) => fs.writeFileSync(path.join(tree, edit.file), edit.apply(originals[edit.file], n));
const restore = () => Object.entries(originals).forEach(([f, t]) => fs.writeFileSync(path.join(tree, f), t));

console.error(`dev on a copy of the checkout (${tree})...`);
const dev = await startDev(bin, tree, { RUST_LOG: "warn" });
const browser = await launchBrowser();
let run = 0;
const results = [];
try {
  for (const edit of EDITS) {
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      run += 1;
      const n = run;
      // Settle between runs: the last edit is served and nothing is building.
      await new Promise((r) => setTimeout(r, 300));
      const started = performance.now();
      write(edit, n);
      let ok = false;
      while (!ok) {
        const body = await (await fetch(`${dev.base}${edit.url}`)).text();
        ok = await edit.done(body, n, dev.base);
        if (!ok && performance.now() - started > 30_000) throw new Error(`${edit.name}: not served after 30 s`);
        // Polled every 10 ms: faster polling takes CPU from the build it waits for.
        if (!ok) await new Promise((r) => setTimeout(r, 10));
      }
      times.push(Math.round(performance.now() - started));
    }
    // The same edit again, watched in an open page.
    const seen = [];
    for (let i = 0; i < RUNS; i++) {
      run += 1;
      const n = run;
      // A fresh page each time: an old one may be reloading itself.
      const page = await browser.newPage();
      await page.goto(`${dev.base}${edit.url}`, { waitUntil: "load" });
      // The reload script is connected and the page is the current site.
      await page.waitForSelector("html[data-dev-problems]", { timeout: 30_000 });
      await new Promise((r) => setTimeout(r, 300));
      // The dev script reloads the page; each new document is checked once
      // it is parsed and styled (DOMContentLoaded waits for the stylesheet).
      const [check, arg] = edit.shows(n);
      let loaded = page.waitForEvent("domcontentloaded", { timeout: 30_000 });
      const started = performance.now();
      write(edit, n);
      for (;;) {
        await loaded;
        loaded = page.waitForEvent("domcontentloaded", { timeout: 30_000 });
        if (await page.evaluate(check, arg).catch(() => false)) break;
      }
      loaded.catch(() => {}); // the page closes before another load
      seen.push(Math.round(performance.now() - started));
      await page.close();
    }
    results.push({
      edit: edit.name,
      target: edit.target,
      limit: edit.limit,
      devMs: times,
      devMedianMs: median(times),
      browserMs: seen,
      browserMedianMs: median(seen),
    });
    restore();
    await until(`${dev.base}${edit.url}`, (s, b) => s === 200 && edit.undone(b));
  }
} finally {
  await browser.close();
  await dev.stop();
}

if (REBUILDS > 0) {
  const targetDir = path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "bench-dev");
  const env = { ...cargoEnv(), CARGO_TARGET_DIR: targetDir };
  const cargo = () => {
    const started = performance.now();
    execFileSync("cargo", ["build", "--release", "--quiet"], { cwd: tree, env, stdio: ["ignore", "ignore", "inherit"] });
    return (performance.now() - started) / 1000;
  };
  console.error(`cargo build --release of the copy, once before timing (${targetDir})...`);
  cargo();
  for (const r of results) {
    const edit = EDITS.find((e) => e.name === r.edit);
    const secs = [];
    for (let i = 0; i < REBUILDS; i++) {
      run += 1;
      write(edit, run);
      console.error(`cargo build --release after the ${edit.name} edit...`);
      secs.push(cargo());
      restore();
    }
    r.cargoSeconds = secs.map((s) => Math.round(s * 10) / 10);
    r.cargoMedianSeconds = median(r.cargoSeconds);
  }
}
fs.rmSync(tree, { recursive: true, force: true });

const rows = results.map((r) => [
  r.edit,
  `${r.devMedianMs}`,
  r.devMs.join(", "),
  `${r.browserMedianMs}`,
  r.cargoMedianSeconds === undefined ? "-" : r.cargoMedianSeconds.toFixed(1),
  r.cargoMedianSeconds === undefined ? "-" : `${Math.round((r.cargoMedianSeconds * 1000) / r.devMedianMs)}x`,
  `${r.target}, >= 100x`,
]);
console.log(table(["edit", "dev: write to new HTML, ms (median)", `dev runs, ms (${RUNS})`, "in an open browser, ms (median)", "cargo build --release, s", "ratio", "target"], rows));
const missed = results.filter((r) => r.devMedianMs >= r.limit || r.browserMedianMs >= 1000 || (r.cargoMedianSeconds !== undefined && (r.cargoMedianSeconds * 1000) / r.devMedianMs < 100));
fs.writeFileSync(path.join(root, "bench", "dev-results.json"), JSON.stringify({ date: new Date().toISOString().slice(0, 10), runs: RUNS, results }, null, 2) + "\n");
if (missed.length) {
  console.error(`missed the target: ${missed.map((r) => r.edit).join(", ")}`);
  process.exitCode = 1;
}
