// Starts the real server binary on a free loopback port and a headless
// Chromium (Debian's /usr/bin/chromium by default) for the browser tests.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";
import { freePort } from "../ops/tools.mjs";
import { startStripe } from "./stripe-standin.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

/** Every route of content/routes.json (a new one is checked without an
 *  edit to the tests), the post route with a real post. */
export const TABLE_PATHS = JSON.parse(fs.readFileSync(path.join(root, "content", "routes.json"), "utf8")).routes.map((r) =>
  r.path.replace(":postId", "nfc-integration"),
);

export async function startServer(env = {}) {
  const bin = process.env.CITIZEN_SITE_BIN ?? path.join(root, "target", "debug", "citizen-site");
  if (!fs.existsSync(bin)) throw new Error(`server binary not found at ${bin}: run cargo build first`);
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-e2e-"));
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(bin, [], {
    env: {
      ...process.env,
      ADDR: `127.0.0.1:${port}`,
      SITE_URL: base,
      DATABASE_URL: `sqlite://${dataDir}/site.db`,
      RUST_LOG: process.env.RUST_LOG ?? "warn",
      // The sample team, as someone trying the site sees it (serve's own
      // default is an empty team); the About tests read it.
      SAMPLE_TEAM: "true",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  // The server and its SQLite file go at the end of the run, also when a test fails first.
  process.on("exit", () => {
    child.kill("SIGKILL");
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("server not ready after 30 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    stop() {
      child.kill("SIGTERM");
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser() {
  const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!fs.existsSync(executablePath)) {
    throw new Error(`Chromium not found at ${executablePath}: apt-get install chromium (or set CHROMIUM_PATH)`);
  }
  // Playwright gives every launch a fresh, throwaway user-data-dir itself.
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Collects console errors and warnings (hydration mismatches land here),
 *  uncaught page errors and Content-Security-Policy violations (anything the
 *  site's policy blocked: a page broken by its own security headers). */
export function watchConsole(page) {
  const problems = [];
  page
    .addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        console.error(`CSP violation: ${e.effectiveDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`),
      );
    })
    .catch(() => {});
  page.on("console", (msg) => {
    if (msg.type() !== "error" && msg.type() !== "warning") return;
    // A 404 page's own status is reported as a failed load of the document.
    if (msg.text().startsWith("Failed to load resource") && msg.location().url === page.url()) return;
    problems.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
  });
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  return problems;
}

/** For a test file: the server on the Stripe stand-in (its prices, its
 *  checkout) and Chromium, started before the file's tests and stopped
 *  after them. The returned object's `server`, `stripe` and `browser` are
 *  there once the tests run. */
export function siteWithStripe() {
  const site = {};
  before(async () => {
    let siteBase = "";
    site.stripe = await startStripe(() => siteBase);
    site.server = await startServer({ STRIPE_SECRET_KEY: "sk_test_e2e", STRIPE_API_BASE: site.stripe.base });
    siteBase = site.server.base;
    site.browser = await launchBrowser();
  });
  after(async () => {
    await site.browser?.close();
    site.server?.stop();
    site.stripe?.stop();
  });
  return site;
}

/** Waits until React has hydrated the page (its handlers are attached). */
export function hydrated(page) {
  return page.waitForFunction(() => Object.keys(document.getElementById("root") ?? {}).some((k) => k.startsWith("__reactContainer")));
}

/**
 * Pages for `onPages` whose console is watched (`watchConsole`): `newPage`
 * opens one as `open` does; `problems()` is what all of them reported.
 */
export function watchedPages(open) {
  const watched = [];
  return {
    newPage: async () => {
      const page = await open();
      watched.push(watchConsole(page));
      return page;
    },
    problems: () => watched.flat(),
  };
}

/** `each(page, path)` over `paths`, on `pages` pages (from `newPage`) at
 *  once, each taking the next path when it is done: a route's check mostly
 *  waits (for the network to go quiet, for Chromium's answer to each key),
 *  and a page's layout, focus and styles are its own (Playwright emulates
 *  focus in every page). The results in the order of `paths`. */
export async function onPages(newPage, paths, each, pages = 2) {
  const results = new Array(paths.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(pages, paths.length) }, async () => {
      const page = await newPage();
      try {
        while (next < paths.length) {
          const i = next++;
          results[i] = await each(page, paths[i]);
        }
      } finally {
        await page.close();
      }
    }),
  );
  return results;
}
