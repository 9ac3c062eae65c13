// Chromium on HTTP/3 for one origin, and a page's own fetch loop that
// judges a publish as a visitor's browser meets it: pages, route data and
// form posts, each fetch answered or failed, Chromium retrying by itself
// what a GOAWAY left unprocessed (RFC 9114, 5.2).
//
// Chromium is forced onto QUIC for that origin alone
// (--origin-to-force-quic-on) and told to trust the leaf certificate's key
// (--ignore-certificate-errors-spki-list), without --disable-quic.
//
// Imported by tests/e2e/http3.test.mjs (three `citizen-site upgrade`s).
// Run as a program by tests/ops/live-systemd-inside.sh (three `systemctl
// reload`s inside the throwaway root of tests/live_systemd.rs):
//
//   node chromium-quic.mjs --origin https://HOST --cert LEAF.pem \
//     --ready FILE --stop-file FILE --report FILE.json [--post-every-ms MS]
//
// It loads /about over HTTP/3, starts the loop, creates the ready file,
// and once the stop file exists writes the report (answered, failed,
// posted, protocols) and exits 1 if any fetch failed. A post answered
// 429 (the rate limit) counts as failed: pace them with --post-every-ms.
import crypto from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

/** The SHA-256 (base64) of the key of the first certificate in a PEM file. */
export function spkiOf(certPath) {
  const cert = new crypto.X509Certificate(fs.readFileSync(certPath));
  const der = cert.publicKey.export({ type: "spki", format: "der" });
  return crypto.createHash("sha256").update(der).digest("base64");
}

/**
 * Chromium, headless, on QUIC for `origin` (its host mapped to loopback),
 * trusting the leaf key `spki`. `netlog`: a file for Chromium's net log.
 */
export function launchOnQuic({ origin, spki, netlog }) {
  const { hostname, port } = new URL(origin);
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--origin-to-force-quic-on=${hostname}:${port || 443}`,
      `--ignore-certificate-errors-spki-list=${spki}`,
      `--host-resolver-rules=MAP ${hostname} 127.0.0.1`,
      ...(netlog ? [`--log-net-log=${netlog}`, "--net-log-capture-mode=Default"] : []),
    ],
  });
}

/** The protocol of the page's navigation ("h3" over HTTP/3). */
export const protocol = (page) =>
  page.evaluate(() => performance.getEntriesByType("navigation")[0].nextHopProtocol);

/**
 * Starts the page's own loop: 4 at once, fetching pages and route data,
 * and posting the form (as `Chromium<loop>x<n>`): every tenth fetch, or
 * with `postEveryMs` once every so many milliseconds among the four (to
 * stay under a server's RATE_LIMIT_PER_MINUTE).
 */
export function startFetchLoop(page, { postEveryMs = 0 } = {}) {
  return page.evaluate((postEveryMs) => {
    performance.setResourceTimingBufferSize(1_000_000);
    window.__load = { ok: 0, failed: [], posted: [], stop: false, lastPost: Date.now() };
    const paths = ["/", "/pricing", "/api/route-data?url=%2Fwallets"];
    const postNow = (n) => {
      if (!postEveryMs) return n % 10 === 9;
      if (Date.now() - window.__load.lastPost < postEveryMs) return false;
      window.__load.lastPost = Date.now();
      return true;
    };
    const loop = async (worker) => {
      for (let n = 0; !window.__load.stop; n++) {
        const name = `Chromium${worker}x${n}`;
        const post = postNow(n);
        try {
          const res = post
            ? await fetch("/api/save-to-notion", {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ name, contactPerson: "Ana", email: "ana@quic.example", website: "", description: "Through publishes", tags: ["Loyalty"] }),
              })
            : await fetch(paths[n % paths.length], { cache: "no-store" });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`status ${res.status}`);
          if (post) window.__load.posted.push(name);
          window.__load.ok++;
        } catch (e) {
          window.__load.failed.push(`${name}: ${e}`);
        }
      }
    };
    window.__loops = Promise.all([0, 1, 2, 3].map(loop));
  }, postEveryMs);
}

/**
 * Stops the loop once each fetch under way has ended: what was answered,
 * what failed (with why), the posts acknowledged, and every protocol the
 * page's fetches used.
 */
export function stopFetchLoop(page) {
  return page.evaluate(async () => {
    window.__load.stop = true;
    await window.__loops;
    const entries = performance.getEntriesByType("resource").map((e) => e.nextHopProtocol);
    return { ok: window.__load.ok, failed: window.__load.failed, posted: window.__load.posted, protocols: [...new Set(entries)] };
  });
}

async function main() {
  const { values: a } = parseArgs({
    options: {
      origin: { type: "string" },
      cert: { type: "string" },
      ready: { type: "string" },
      "stop-file": { type: "string" },
      report: { type: "string" },
      "post-every-ms": { type: "string" },
    },
  });
  for (const name of ["origin", "cert", "ready", "stop-file", "report"]) {
    if (!a[name]) throw new Error(`--${name} is needed`);
  }
  const browser = await launchOnQuic({ origin: a.origin, spki: spkiOf(a.cert) });
  try {
    const page = await browser.newPage();
    await page.goto(`${a.origin}/about`, { waitUntil: "networkidle" });
    const first = await protocol(page);
    if (first !== "h3") throw new Error(`/about came over ${first}, not h3`);
    await startFetchLoop(page, { postEveryMs: Number(a["post-every-ms"] ?? 0) });
    fs.writeFileSync(a.ready, "");
    while (!fs.existsSync(a["stop-file"])) await new Promise((r) => setTimeout(r, 100));
    const load = await stopFetchLoop(page);
    fs.writeFileSync(a.report, JSON.stringify(load));
    console.log(`Chromium's fetches over HTTP/3: ${load.ok} answered, ${load.failed.length} failed, protocols ${load.protocols}`);
    for (const f of load.failed) console.log(`failed: ${f}`);
    process.exitCode = load.failed.length ? 1 : 0;
  } finally {
    await browser.close();
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
