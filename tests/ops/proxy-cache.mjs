// Proves docs/performance.md's shared-cache setup ("Behind a shared cache"):
// nginx, configured with the guide's own block, in front of two server processes
// on one PostgreSQL database.
//
//   1. Warm-up: every page once per encoding (br, gzip, none) through nginx.
//   2. PROXY_REQUESTS page requests (default 3000) through nginx, every page
//      and encoding in turn: the two processes must see none of them (their
//      own request counters, read from /metrics before and after).
//   3. A team member added with `citizen-site team import` must show on
//      /about through nginx within TEAM_REFRESH_SECS + the page's s-maxage,
//      plus the request that starts nginx's background fetch.
//
//   node tests/ops/proxy-cache.mjs       (npm run proxy-cache)
//
// TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test: a
// database is created for the run and dropped after). Needs nginx and psql.
// Uses $CITIZEN_SITE_BIN, else builds the release binary.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { createDatabase, freePort, need, root, siteBinary, sleep, startNginx, startSite, table, tempDir, waitFor } from "./tools.mjs";

const REQUESTS = Number(process.env.PROXY_REQUESTS ?? 3000);
const CONCURRENCY = 16;
const TEAM_REFRESH_SECS = 5;
const ENCODINGS = ["br", "gzip", ""];
const NEW_MEMBER = "Proxy Cache Probe";

need("nginx", "nginx");
need("psql", "postgresql-client");

// The guide's block, pointed at this run's processes, port and folder.
function readmeConfig(ports, listen, cacheDir) {
  const readme = fs.readFileSync(path.join(root, "docs", "performance.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Behind a shared cache"));
  const block = section.match(/```nginx\n([\s\S]*?)```/)?.[1];
  if (!block) throw new Error("no nginx block under 'Behind a shared cache' in docs/performance.md");
  let conf = block;
  const swap = (from, to) => {
    if (!conf.includes(from)) throw new Error(`docs/performance.md's nginx block has no ${JSON.stringify(from)}`);
    conf = conf.replace(from, to);
  };
  swap("server 10.0.0.11:3000;", `server 127.0.0.1:${ports[0]};`);
  swap("server 10.0.0.12:3000;", `server 127.0.0.1:${ports[1]};`);
  swap("listen 80;", `listen 127.0.0.1:${listen};`);
  swap("/var/cache/nginx/citizen", cacheDir);
  return conf;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function get(url, encoding) {
  return new Promise((resolve, reject) => {
    const headers = encoding ? { "accept-encoding": encoding } : {};
    http
      .get(url, { agent, headers }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, cache: res.headers["x-cache-status"], body: Buffer.concat(chunks) }));
      })
      .on("error", reject);
  });
}

// Requests each process has answered, from its own metrics (its /metrics
// reads left out: they are this script asking).
async function originRequests(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let n = 0;
  for (const line of text.split("\n")) {
    const m = line.match(/^http_request_duration_seconds_count\{route="([^"]*)",status="\d+"\} (\d+)/);
    if (m && m[1] !== "/metrics") n += Number(m[2]);
  }
  return n;
}

const db = createDatabase("citizen_proxy_cache");
const bin = siteBinary();
const ports = [await freePort(), await freePort()];
const env = { DATABASE_URL: db.url, TRUSTED_PROXIES: "127.0.0.1", TEAM_REFRESH_SECS: String(TEAM_REFRESH_SECS) };
const procs = ports.map((p) => startSite(bin, p, env));
for (const p of ports) await waitFor(`http://127.0.0.1:${p}/readyz`);
const listen = await freePort();
const cacheDir = tempDir("citizen-proxy-cache-");
const nginx = await startNginx(readmeConfig(ports, listen, cacheDir), `http://127.0.0.1:${listen}/readyz`);
const lb = `http://127.0.0.1:${listen}`;

const routes = JSON.parse(fs.readFileSync(path.join(root, "content/routes.json"), "utf8")).routes;
const pages = routes.filter((r) => r.page !== "Success").map((r) => r.path.replace(":postId", "nfc-integration"));
const aboutPolicy = (await fetch(`${lb}/about`)).headers.get("cache-control");
const sMaxAge = Number(aboutPolicy.match(/s-maxage=(\d+)/)?.[1]);

// 1. Warm-up: until nginx answers every page and encoding from its cache.
const cold = [];
for (const p of pages) {
  for (const enc of ENCODINGS) {
    let r = await get(`${lb}${p}`, enc);
    for (let i = 0; i < 5 && r.cache !== "HIT"; i++) r = await get(`${lb}${p}`, enc);
    if (r.cache !== "HIT") cold.push(`${p} (${enc || "identity"}): ${r.cache}`);
  }
}
// Nor may the payment page ever be kept.
const success = await get(`${lb}/success?session_id=cs_test_probe`, "br");
const success2 = await get(`${lb}/success?session_id=cs_test_probe`, "br");

// 2. Warm pages: none reach the processes.
const before = (await Promise.all(ports.map(originRequests))).reduce((a, b) => a + b, 0);
const started = Date.now();
let sent = 0;
let hits = 0;
let failed = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (sent < REQUESTS) {
      const n = sent++;
      const r = await get(`${lb}${pages[n % pages.length]}`, ENCODINGS[Math.floor(n / pages.length) % ENCODINGS.length]);
      if (r.status !== 200) failed++;
      if (r.cache === "HIT") hits++;
    }
  }),
);
const burstMs = Date.now() - started;
const after = (await Promise.all(ports.map(originRequests))).reduce((a, b) => a + b, 0);
const originHits = after - before;

// 3. A team change through the cache.
const file = path.join(cacheDir, "team.json");
fs.writeFileSync(file, JSON.stringify([{ name: NEW_MEMBER, role: "Operations" }]));
execFileSync(bin, ["team", "import", file], { env: { ...process.env, DATABASE_URL: db.url }, stdio: "ignore" });
const changed = Date.now();
const boundMs = (TEAM_REFRESH_SECS + sMaxAge) * 1000;
let shownMs = null;
while (Date.now() - changed < boundMs + 10_000) {
  const r = await get(`${lb}/about`, "");
  if (r.body.toString().includes(NEW_MEMBER)) {
    shownMs = Date.now() - changed;
    break;
  }
  await sleep(250);
}

procs.forEach((p) => p.kill("SIGTERM"));
nginx.kill("SIGTERM");
agent.destroy();
await sleep(300);
db.drop();
fs.rmSync(cacheDir, { recursive: true, force: true });

// The request that starts nginx's background fetch gets the stale copy; the
// next poll (250 ms on) the new one, once the render is done.
const slackMs = 1500;
console.log(`\nShared cache, ${new Date().toISOString().slice(0, 10)}: nginx (docs/performance.md's block) in front of 2 processes, one PostgreSQL\n`);
console.log(
  table(
    ["measure", "value", "target"],
    [
      ["pages x encodings not cached after warm-up", String(cold.length), "0"],
      ["payment page answers nginx kept", [success, success2].filter((r) => r.cache === "HIT").length + ` (${success2.cache})`, "0"],
      [`page requests through nginx (in ${burstMs} ms)`, `${REQUESTS} (${hits} cache hits, ${failed} failed)`, `${REQUESTS} hits, 0 failed`],
      ["of them, requests that reached a process", String(originHits), "0"],
      ["team change shown on /about through nginx after, s", shownMs === null ? "never" : (shownMs / 1000).toFixed(1), `<= ${TEAM_REFRESH_SECS} + ${sMaxAge} (+ ${slackMs / 1000})`],
    ],
  ),
);
const failures = [];
if (cold.length) failures.push(`not cached after warm-up: ${cold.join(", ")}`);
if (success2.cache === "HIT") failures.push("nginx kept the payment page");
if (failed || hits !== REQUESTS) failures.push(`${failed} failed, ${REQUESTS - hits} not from the cache`);
if (originHits !== 0) failures.push(`${originHits} requests reached the processes`);
if (shownMs === null || shownMs > boundMs + slackMs) failures.push(`the team change took ${shownMs ?? "forever"} ms (bound ${boundMs + slackMs})`);
if (failures.length) {
  console.error(`FAILED: ${failures.join("; ")}`);
  process.exit(1);
}
process.exit(0);
