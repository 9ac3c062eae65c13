// Row 10 of the bench: requests failed during 5 upgrades under load, and
// the worst latency during a swap against the same load without swaps.
// The release binary serves HTTPS (a certificate of a CA made here) from a
// path of its own; bench/swap-load.mjs keeps its load running (keep-alive
// HTTP/1.1, HTTP/2 streams, a new connection per request, form posts)
// while `citizen-site upgrade` swaps the process UPGRADES times, a new
// copy of the binary installed at that path before each.
//
//   node bench/swaps.mjs    this row alone: rewrites bench/results.json's
//                           rows.swaps and docs/performance.md's table
// bench/run.mjs runs it as its last row.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import { freePort, need, siteBinary, tempDir } from "../tests/ops/tools.mjs";
import { snapshot, startLoad } from "./swap-load.mjs";
import { certificate, readyTls } from "./tls.mjs";

export const UPGRADES = 5;
/** The load alone before the first swap, and after each, ms. */
const STEADY_MS = Number(process.env.BENCH_SWAP_STEADY_MS ?? 5000);
const BETWEEN_MS = Number(process.env.BENCH_SWAP_BETWEEN_MS ?? 2000);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A new file renamed over the old, as an operator publishes a binary. */
export function install(bin, at) {
  fs.copyFileSync(bin, `${at}.new`);
  fs.chmodSync(`${at}.new`, 0o755);
  fs.renameSync(`${at}.new`, at);
}

/** The binary at `at` serving HTTPS with `certs` (made by tls.mjs's
 *  `certificate`) on a free port, its database in `dir`, once ready. */
export async function serveTls(at, certs, dir) {
  const port = await freePort();
  const child = spawn(at, ["serve"], {
    env: {
      PATH: process.env.PATH,
      TLS_CERT: certs.cert,
      TLS_KEY: certs.key,
      HTTPS_ADDR: `127.0.0.1:${port}`,
      HTTP_ADDR: `127.0.0.1:${await freePort()}`,
      SITE_URL: "https://localhost",
      DATABASE_URL: `sqlite://${dir}/site.db`,
      RATE_LIMIT_PER_MINUTE: "0",
    },
    stdio: ["ignore", "ignore", "ignore"],
  });
  try {
    await readyTls(port, certs.ca);
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  return { child, port, options: { url: `https://localhost:${port}`, ca: certs.caFile } };
}

export async function swapRow(bin) {
  need("openssl", "openssl");
  const dir = tempDir("citizen-swaps-");
  const certs = certificate(dir);
  const at = path.join(dir, "citizen-site");
  install(bin, at);
  const { child: server, options } = await serveTls(at, certs, dir);
  let pid = server.pid;
  try {
    const expect = Object.fromEntries(Object.entries(await snapshot(options)).map(([p, h]) => [p, [h]]));
    const load = startLoad({ ...options, expect });
    await sleep(STEADY_MS);
    for (let i = 0; i < UPGRADES; i++) {
      install(bin, at);
      load.mark("swap");
      // Not execFileSync: the load runs in this process and must go on
      // reading its answers meanwhile.
      const { stdout: said } = await promisify(execFile)(at, ["upgrade", "--pid", String(pid)], { encoding: "utf8" });
      pid = Number(said.match(/upgraded: pid (\d+)/)?.[1] ?? NaN);
      if (!pid) throw new Error(`upgrade ${i + 1}: ${said}`);
      load.mark("settled");
      await sleep(BETWEEN_MS);
    }
    const r = await load.stop();
    return {
      date: new Date().toISOString().slice(0, 10),
      upgrades: r.swaps,
      requests: r.requests,
      failed: r.failed,
      failures: r.failures,
      retried: r.retried,
      withoutSwaps: r.latencyMs.steady,
      duringSwaps: r.latencyMs.duringSwaps,
    };
  } finally {
    try { process.kill(pid, "SIGTERM"); } catch {}
    server.kill("SIGKILL");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { recordRow } = await import("./report.mjs");
  const bin = siteBinary();
  console.error(`row 10: ${UPGRADES} upgrades under load...`);
  const row = await swapRow(bin);
  recordRow("swaps", row);
  console.log(JSON.stringify(row, null, 2));
  process.exit(row.failed === 0 ? 0 : 1);
}
