// The benchmark suite: `node bench/run.mjs` (see README, Performance).
// Builds the release binary, starts it, and prints one table: each row our
// figure, the peer's figure measured in the same run, and the ratio. The
// README's table is written from its JSON output (bench/report.mjs).
//
//   1. cached pages: wrk on each of PAGES against nginx serving the same
//      rendered bytes and headers (gzip, as both send them); each side
//      warmed up, then the two in turn page by page, BENCH_ROUNDS times; a
//      page's ratio is the ratio of the medians, and the row's figure is the
//      worst page's (target: at least 0.9 of nginx)
//   2. renders with the page cache off vs a Node server running the same
//      SSR bundle with the same data
//   3. cold start to the first 200 on / (median of runs)
//   4. page weight per route (compressed JS and CSS on first load)
//   5. peak RSS during rows 1 and 2
//   6. latency p50 / p99 for rows 1 and 2
//   7. the release binary's size (stripped)
//
// Exits non-zero when a row misses its target. Needs wrk and nginx
// (installed from Debian's packages when missing and run as root). Writes
// bench/results.json, bench/results.svg and the README's table.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, need, siteBinary, startNginx, startSite as startOpsSite, waitFor } from "../tests/ops/tools.mjs";
import { benchTable, writeReadme } from "./report.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const DURATION = process.env.BENCH_DURATION ?? "10s";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
// Every kind of page: no data, a database table, all posts, one post, Stripe.
const PAGES = ["/", "/about", "/blog", "/blog/brussels-pay-launch", "/pricing"];
const RENDER_PAGES = ["/", "/blog", "/pricing"];
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 7);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP = process.env.BENCH_WARMUP ?? "2s";
const children = [];
process.on("exit", () => children.forEach((c) => c.kill("SIGKILL")));
let bin;

function startSite(env) {
  const { ADDR, ...rest } = env;
  return startOpsSite(bin, Number(ADDR.split(":")[1]), rest);
}

function wrk(url, headers = {}, duration = DURATION) {
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${duration}`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const out = execFileSync("wrk", [...args, url], { encoding: "utf8" });
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)[1]);
  const pct = (p) => toMs(out.match(new RegExp(`\\s${p}%\\s+([\\d.]+\\w+)`))[1]);
  const non2xx = Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0);
  const errors = out.match(/Socket errors:.*/)?.[0];
  if (non2xx || errors) console.error(`  note for ${url}: ${non2xx} non-2xx ${errors ?? ""}`);
  return { rps, p50: pct(50), p99: pct(99) };
}

function toMs(v) {
  const n = parseFloat(v);
  if (v.endsWith("us")) return n / 1000;
  if (v.endsWith("ms")) return n;
  if (v.endsWith("s")) return n * 1000;
  return n;
}

function peakRssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(status.match(/VmHWM:\s+(\d+) kB/)[1]) / 1024;
}

/** Runs each render page through wrk; the mean rps and the worst latencies. */
function load(base, headers) {
  const per = RENDER_PAGES.map((p) => ({ page: p, ...wrk(`${base}${p}`, headers) }));
  const mean = (k) => per.reduce((a, r) => a + r[k], 0) / per.length;
  return { per, rps: mean("rps"), p50: mean("p50"), p99: Math.max(...per.map((r) => r.p99)) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Ours and the peer, page by page in turn, ROUNDS times, each side warmed
 *  up on the page first: on a machine whose speed drifts (a shared VM),
 *  each pair of runs sees the same conditions. Per page: each side's
 *  median run, and the ratio of the medians. */
function loadInTurn([ours, peer], headers) {
  const pages = PAGES.map((page) => ({ page, ours: [], nginx: [] }));
  for (const p of PAGES) for (const b of [ours, peer]) wrk(`${b}${p}`, headers, WARMUP);
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of pages) {
      row.ours.push(wrk(`${ours}${row.page}`, headers));
      row.nginx.push(wrk(`${peer}${row.page}`, headers));
    }
  }
  const side = (runs) => ({ rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: Math.max(...runs.map((r) => r.p99)), runs: runs.map((r) => r.rps) });
  const rows = pages.map((r) => ({ page: r.page, ours: side(r.ours), nginx: side(r.nginx) })).map((r) => ({ ...r, ratio: r.ours.rps / r.nginx.rps }));
  const worst = rows.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  return { pages: rows, worst: { page: worst.page, ratio: worst.ratio } };
}

async function main() {
  need("wrk", "wrk");
  need("nginx", "nginx");
  delete process.env.CITIZEN_SITE_BIN; // always the release build
  bin = siteBinary();
  const results = {
    date: new Date().toISOString().slice(0, 10),
    cores: os.cpus().length,
    node: process.version,
    nginx: execFileSync("sh", ["-c", "nginx -v 2>&1"], { encoding: "utf8" }).trim().replace(/^nginx version: /, ""),
    settings: { duration: DURATION, connections: CONNECTIONS, rounds: ROUNDS, warmup: WARMUP },
    rows: {},
  };
  results.rows.binaryMb = fs.statSync(bin).size / (1 << 20);

  // Row 3 first, on a quiet machine: cold start.
  const starts = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    const port = await freePort();
    const t0 = process.hrtime.bigint();
    const child = startSite({ ADDR: `127.0.0.1:${port}` });
    for (;;) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/`);
        if (r.status === 200) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 2));
    }
    starts.push(Number(process.hrtime.bigint() - t0) / 1e6);
    child.kill("SIGKILL");
  }
  starts.sort((a, b) => a - b);
  results.rows.coldStartMs = starts[Math.floor(starts.length / 2)];

  // Our server, cache on.
  const portA = await freePort();
  const a = startSite({ ADDR: `127.0.0.1:${portA}` });
  const baseA = `http://127.0.0.1:${portA}`;
  await waitFor(`${baseA}/readyz`);

  // Row 4: page weight per route.
  const routes = JSON.parse(fs.readFileSync(path.join(root, "content/routes.json"), "utf8")).routes;
  const weights = [];
  for (const r of routes) {
    const url = r.path.replace(":postId", "nfc-integration");
    const html = await (await fetch(`${baseA}${url}`)).text();
    // The boot module, and the modules it loads (listed in data-modules).
    const listed = html.match(/ data-modules="([^"]+)"/)?.[1].split(" ") ?? [];
    const js = [...[...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]), ...listed];
    const css = [...html.matchAll(/href="(\/assets\/[^"]+\.css)"/g)].map((m) => m[1]);
    // Bytes on the wire: fetch() would hand back the decoded body.
    const size = async (u) => {
      const res = await fetch(`${baseA}${u}`, { headers: { "accept-encoding": "br" } });
      if (res.headers.get("content-encoding") !== "br") throw new Error(`${u} not served with brotli`);
      await res.arrayBuffer();
      return Number(res.headers.get("content-length"));
    };
    let jsBytes = 0;
    for (const u of js) jsBytes += await size(u);
    let cssBytes = 0;
    for (const u of css) cssBytes += await size(u);
    const others = routes.map((o) => o.page).filter((p) => p !== r.page);
    const foreign = js.filter((u) => others.some((p) => path.basename(u).startsWith(`${p}-`)));
    weights.push({ route: r.path, page: r.page, jsKB: jsBytes / 1024, cssKB: cssBytes / 1024, foreign });
  }
  results.rows.weights = weights;

  // Row 1: cached pages against nginx with the same bytes.
  const www = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-nginx-"));
  for (const p of PAGES) {
    const name = p === "/" ? "index" : p.slice(1);
    fs.mkdirSync(path.dirname(path.join(www, name)), { recursive: true });
    const plain = Buffer.from(await (await fetch(`${baseA}${p}`, { headers: { "accept-encoding": "identity" } })).arrayBuffer());
    fs.writeFileSync(path.join(www, `${name}.html`), plain);
    const gz = execFileSync("sh", ["-c", `curl -s -H 'Accept-Encoding: gzip' ${baseA}${p}`], { maxBuffer: 1 << 24 });
    fs.writeFileSync(path.join(www, `${name}.html.gz`), gz);
  }
  // nginx sends the same response headers ours does (security headers, a
  // request id, and the page's Cache-Control, Vary and ETag), so both put
  // the same bytes on the wire. Its configuration is the fastest found for
  // these files: sendfile off (for bodies of a few KB, one writev of
  // headers and body beats writev + sendfile + the TCP_CORK calls of
  // tcp_nopush; with sendfile on, nginx read 25-35k req/s here against
  // 36-39k without) and an open-file cache (no open/fstat/close per request:
  // 44-55k).
  const ourHeaders = (await fetch(`${baseA}/`, { headers: { "accept-encoding": "gzip" } })).headers;
  const mirrored = ["content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy",
    "permissions-policy", "cross-origin-opener-policy", "cross-origin-resource-policy", "cache-control", "vary"]
    .map((h) => `add_header ${h} "${ourHeaders.get(h)}" always;`).join("\n    ");
  const portN = await freePort();
  const nginx = await startNginx(`
  sendfile off; keepalive_requests 100000;
  open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s;
  gzip_static on; etag on;
  default_type text/html;
  server {
    listen 127.0.0.1:${portN};
    root ${www};
    ${mirrored}
    add_header x-request-id $request_id always;
    location = / { try_files /index.html =404; }
    location / { try_files $uri.html =404; }
  }`, `http://127.0.0.1:${portN}/`, { workers: "auto" });
  const gzip = { "Accept-Encoding": "gzip" };
  console.error("row 1: cached pages (each warmed up, then ours and nginx in turn)...");
  results.rows.cached = { ...loadInTurn([baseA, `http://127.0.0.1:${portN}`], gzip), rssMb: peakRssMb(a.pid) };
  nginx.kill("SIGTERM");
  a.kill("SIGTERM");

  // Row 2: renders, cache off, against Node with the same bundle and data.
  const portB = await freePort();
  const b = startSite({ ADDR: `127.0.0.1:${portB}`, PAGE_CACHE_CAPACITY: "0" });
  const baseB = `http://127.0.0.1:${portB}`;
  await waitFor(`${baseB}/readyz`);
  const data = {};
  for (const p of RENDER_PAGES) data[p] = await (await fetch(`${baseB}/api/route-data?url=${encodeURIComponent(p)}`)).text();
  const dataFile = path.join(www, "data.json");
  fs.writeFileSync(dataFile, JSON.stringify(data));
  const bundle = newest(path.join(path.dirname(bin), "build"), "out/web/ssr.js");
  const portNode = await freePort();
  const node = spawn(process.execPath, [path.join(root, "bench/node-peer.mjs"), bundle, String(portNode), dataFile], { stdio: "ignore" });
  children.push(node);
  await waitFor(`http://127.0.0.1:${portNode}/`);
  console.error("row 2: renders (ours with the cache off, then Node)...");
  const oursRender = load(baseB, {});
  const nodeRender = load(`http://127.0.0.1:${portNode}`, {});
  results.rows.render = { ours: oursRender, node: nodeRender, rssMb: peakRssMb(b.pid), nodeRssMb: peakRssMb(node.pid) };
  node.kill("SIGTERM");
  b.kill("SIGTERM");

  fs.writeFileSync(path.join(root, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  fs.writeFileSync(path.join(root, "bench/results.svg"), chart(results));
  const { rows, missed } = benchTable(results);
  console.log(`\nBenchmarks, ${results.date}, ${results.cores} cores (peers: ${results.nginx} for row 1, Node ${results.node} for row 2)\n`);
  console.log(rows);
  writeReadme();
  if (missed.length) {
    console.error(`\nFAILED: ${missed.join("; ")}`);
    process.exit(1);
  }
}

function newest(dir, suffix) {
  const hits = fs.readdirSync(dir).map((d) => path.join(dir, d, suffix)).filter((f) => fs.existsSync(f));
  hits.sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs);
  if (!hits.length) throw new Error("no release SSR bundle found");
  return hits[0];
}

function chart(r) {
  const { cached, render } = r.rows;
  const pairs = [
    ...cached.pages.map((p) => [`${p.page}: nginx`, p.nginx.rps, `${p.page}: ours`, p.ours.rps]),
    ["renders: Node", render.node.rps, "renders: ours", render.ours.rps],
  ];
  // Each pair on its own scale: cached pages are ~50x more than renders.
  const rows = pairs.flatMap(([la, a, lb, b], k) => {
    const max = Math.max(a, b);
    return [[la, a, "#94a3b8"], [lb, b, "#1f5ad6"]].map(([label, v, colour], j) => {
      const y = 36 + k * 64 + j * 28;
      const w = Math.max(2, (v / max) * 380);
      return `<text x="10" y="${y + 17}" font-size="12">${label}</text>` +
        `<rect x="250" y="${y}" width="${w.toFixed(1)}" height="24" fill="${colour}"/>` +
        `<text x="${(256 + w).toFixed(1)}" y="${y + 17}" font-size="12">${Math.round(v)} req/s</text>`;
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="760" height="${48 + pairs.length * 64}" font-family="sans-serif">` +
    `<text x="10" y="22" font-size="15" font-weight="bold">Requests per second, ${r.date}, ${r.cores} cores (each pair to its own scale)</text>` +
    rows.join("") + `</svg>\n`;
}

if (process.argv[2] === "--chart-only") {
  // Redraw the chart from the last results.
  const r = JSON.parse(fs.readFileSync(path.join(root, "bench/results.json"), "utf8"));
  fs.writeFileSync(path.join(root, "bench/results.svg"), chart(r));
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
