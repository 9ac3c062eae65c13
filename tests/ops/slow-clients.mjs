// Slow and hostile clients on the HTTPS port: does the site still serve
// visitors while Debian's slowhttptest holds 1,000 connections open?
//
//   node tests/ops/slow-clients.mjs     (npm run slow-clients)
//
// SLOW_DURATION (default 60s per attack), SLOW_CONNECTIONS (1000).
// Uses $CITIZEN_SITE_BIN, else builds the release binary. Needs
// slowhttptest and openssl (Debian packages of those names).
//
// The site serves HTTPS itself (TLS_CERT/TLS_KEY: a certificate made with
// openssl for this run) with its default limits. Each attack runs for its
// length from 127.0.0.1:
//
// - slowloris: request heads sent a header line at a time, every 10 s;
// - slow body: a form post whose 8 KB body comes a few bytes every 10 s;
// - slow read: pages asked for (3 per connection) and read a few bytes at
//   a time through a receive window of at most 16 bytes;
// - silent: TCP connections that never begin their TLS handshake.
//
// Each attack is run twice, at the same time against two servers: as one
// address (the per-client cap, MAX_CONNECTIONS_PER_CLIENT, applies) and as
// if from 1,000 addresses (the cap off, MAX_CONNECTIONS_PER_CLIENT=0: only
// the timeouts and MAX_CONNECTIONS stand). Meanwhile a visitor from another address
// (127.0.0.2) opens a new HTTPS connection every 250 ms and asks for a
// page. The target: every visitor request answered 200, each in under 2 s.
// slowhttptest stops early when the server has closed every connection it
// opened (slowloris: the 10 s limit on a request's head); the table says
// how long each attack lasted.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import path from "node:path";
import { freePort, need, siteBinary, sleep, startSite, table, tempDir } from "./tools.mjs";

const DURATION = Number.parseInt(process.env.SLOW_DURATION ?? "60", 10);
const CONNECTIONS = Number(process.env.SLOW_CONNECTIONS ?? 1000);
const VISITOR_EVERY_MS = 250;
const LIMIT_MS = 2000;
const PAGES = ["/", "/about", "/blog", "/pricing", "/contact", "/wallets", "/blog/nfc-integration"];

need("slowhttptest", "slowhttptest");
need("openssl", "openssl");
const bin = siteBinary();
const dir = tempDir("citizen-slow-");
const cert = path.join(dir, "cert.pem");
const key = path.join(dir, "key.pem");
execFileSync("openssl", [
  "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
  "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert,
], { stdio: "ignore" });
const ca = fs.readFileSync(cert);

/** One visitor request on a new connection from 127.0.0.2: status and ms. */
function visit(port, page) {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = https.get(
      { host: "127.0.0.1", servername: "localhost", port, path: page, ca, localAddress: "127.0.0.2", agent: false, timeout: 10_000, headers: { host: `localhost:${port}` } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - started }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e) => resolve({ status: e.message, ms: performance.now() - started }));
  });
}

/** Visits every VISITOR_EVERY_MS until `stop()`; resolves with the results. */
function visitor(port) {
  const results = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const next = sleep(VISITOR_EVERY_MS);
      results.push(await visit(port, PAGES[i % PAGES.length]));
      await next;
    }
    return results;
  })();
  return { stop: () => ((running = false), done) };
}

/** slowhttptest in one mode; resolves with the most connections it held at once. */
function slowhttptest(mode, port) {
  const url = mode === "-B" ? `https://localhost:${port}/api/save-to-notion` : `https://localhost:${port}/`;
  const args = [mode, "-c", String(CONNECTIONS), "-r", "200", "-l", String(DURATION), "-i", "10", "-p", "3", "-u", url];
  if (mode === "-B") args.push("-s", "8192", "-t", "POST");
  if (mode === "-X") args.push("-k", "3", "-w", "1", "-y", "16", "-n", "2", "-z", "4");
  return new Promise((resolve, reject) => {
    const child = spawn("slowhttptest", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", () => {
      out = out.replace(/\x1b\[[0-9;]*m/g, "");
      const held = [...out.matchAll(/connected:\s+(\d+)/g)].map((m) => Number(m[1]));
      if (held.length === 0) reject(new Error(`slowhttptest printed no status:\n${out.slice(-2000)}`));
      else resolve(Math.max(...held));
    });
  });
}

/** CONNECTIONS TCP connections that never send a byte, held for the length. */
async function silent(port) {
  const sockets = [];
  let held = 0;
  let peak = 0;
  for (let i = 0; i < CONNECTIONS; i++) {
    const s = net.connect({ host: "127.0.0.1", port });
    s.on("connect", () => (held++, (peak = Math.max(peak, held))));
    s.on("close", () => held--);
    s.on("error", () => {});
    sockets.push(s);
    if (i % 200 === 199) await sleep(1000);
  }
  await sleep(DURATION * 1000 - 5000);
  sockets.forEach((s) => s.destroy());
  return peak;
}

const ATTACKS = [
  ["slowloris (slow headers)", (port) => slowhttptest("-H", port)],
  ["slow body (POST)", (port) => slowhttptest("-B", port)],
  ["slow read (16-byte window)", (port) => slowhttptest("-X", port)],
  ["silent (no TLS handshake)", silent],
];

/** The attacks one after another on a server of its own with `env`; the
 *  table's rows. */
async function underAttack(addresses, env) {
  const rows = [];
  let failed = false;
  const port = await freePort();
  const site = startSite(bin, port, {
    TLS_CERT: cert, TLS_KEY: key, SITE_URL: `https://localhost:${port}`,
    HTTPS_ADDR: `127.0.0.1:${port}`, HTTP_ADDR: `127.0.0.1:${await freePort()}`, ...env,
  });
  for (;;) {
    const r = await visit(port, "/readyz");
    if (r.status === 200) break;
    if (site.exitCode !== null) throw new Error("the site exited");
    await sleep(100);
  }
  for (const [name, attack] of ATTACKS) {
    console.error(`slow-clients: ${name} from ${addresses} address(es), ${DURATION} s...`);
    const v = visitor(port);
    const began = performance.now();
    const peak = await attack(port);
    const lasted = (performance.now() - began) / 1000;
    const results = await v.stop();
    const times = results.map((r) => r.ms).sort((a, b) => a - b);
    const answered = results.filter((r) => r.status === 200).length;
    const slowest = times.at(-1) ?? Infinity;
    const ok = answered === results.length && results.length > 0 && slowest < LIMIT_MS;
    failed ||= !ok;
    const failures = results.filter((r) => r.status !== 200).map((r) => r.status);
    rows.push([
      name, addresses, String(peak), lasted.toFixed(0), `${answered} / ${results.length}${failures.length ? ` (${[...new Set(failures)].join(", ")})` : ""}`,
      times[Math.floor(times.length / 2)].toFixed(0), times[Math.floor(times.length * 0.99)].toFixed(0), slowest.toFixed(0),
      ok ? "yes" : "NO",
    ]);
    // Let the last attack's connections time out before the next.
    await sleep(2000);
  }
  site.kill("SIGTERM");
  await new Promise((r) => site.on("exit", r));
  return { rows, failed };
}

// Both set-ups at once, each its own server and attackers: the visitors of
// each are served while twice the attackers load the machine, in half the
// time one after the other would take.
const runs = await Promise.all([
  underAttack("one", {}),
  underAttack("1,000 (cap off)", { MAX_CONNECTIONS_PER_CLIENT: "0" }),
]);
const rows = runs.flatMap((r) => r.rows);
const failed = runs.some((r) => r.failed);

console.log(`\nslow clients on the HTTPS port: ${DURATION} s per attack, ${CONNECTIONS} attacker connections, a visitor every ${VISITOR_EVERY_MS} ms on a new connection\n`);
console.log(table(
  ["attack", "attacker addresses", "attacker connections open (peak)", "attack lasted, s", "visitor requests answered 200", "p50 ms", "p99 ms", "slowest ms", "every one in < 2 s"],
  rows,
));
if (failed) {
  console.error("\nslow-clients: a visitor request failed or took 2 s or more");
  process.exit(1);
}
