// The benchmark suite: `node bench/run.mjs` (see README, Performance).
// Builds the release binary, starts it, and prints one table: each row our
// figure, the peer's figure measured in the same run, and the ratio.
//
//   1. cached pages: wrk on /, /blog, /pricing vs nginx serving the same
//      rendered bytes and headers (gzip, as both send them), the two in turn
//      page by page, BENCH_ROUNDS times
//   2. renders with the page cache off vs a Node server running the same
//      SSR bundle with the same data
//   3. cold start to the first 200 on / (median of runs)
//   4. page weight per route (compressed JS and CSS on first load)
//   5. peak RSS during rows 1 and 2
//   6. latency p50 / p99 for rows 1 and 2
//
// Needs wrk and nginx (installed from Debian's packages when missing and run
// as root). Writes
// bench/results.json and bench/results.svg.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, need, siteBinary, startNginx, startSite as startOpsSite, waitFor } from "../tests/ops/tools.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const DURATION = process.env.BENCH_DURATION ?? "10s";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PAGES = ["/", "/blog", "/pricing"];
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 7);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const children = [];
process.on("exit", () => children.forEach((c) => c.kill("SIGKILL")));
let bin;

function startSite(env) {
  const { ADDR, ...rest } = env;
  return startOpsSite(bin, Number(ADDR.split(":")[1]), rest);
}

function wrk(url, headers = {}) {
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${DURATION}`, "--latency"];
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

/** Runs each page through wrk, returns summed rps and worst latencies. */
function load(base, headers) {
  return summarise(PAGES.map((p) => ({ page: p, ...wrk(`${base}${p}`, headers) })));
}

function summarise(per) {
  const mean = (k) => per.reduce((a, r) => a + r[k], 0) / per.length;
  return { per, rps: mean("rps"), p50: mean("p50"), p99: Math.max(...per.map((r) => r.p99)) };
}

/** Both servers, page by page in turn, ROUNDS times: on a machine whose speed
 *  drifts (a shared VM), each pair of runs sees the same conditions. */
function loadInTurn(bases, headers) {
  const per = bases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of PAGES) bases.forEach((b, i) => per[i].push({ page: p, ...wrk(`${b}${p}`, headers) }));
  }
  return per.map(summarise);
}

async function main() {
  need("wrk", "wrk");
  need("nginx", "nginx");
  delete process.env.CITIZEN_SITE_BIN; // always the release build
  bin = siteBinary();
  const results = { date: new Date().toISOString().slice(0, 10), cores: os.cpus().length, rows: {} };

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
    const js = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
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
    const plain = Buffer.from(await (await fetch(`${baseA}${p}`, { headers: { "accept-encoding": "identity" } })).arrayBuffer());
    fs.writeFileSync(path.join(www, `${name}.html`), plain);
    const gz = execFileSync("sh", ["-c", `curl -s -H 'Accept-Encoding: gzip' ${baseA}${p}`], { maxBuffer: 1 << 24 });
    fs.writeFileSync(path.join(www, `${name}.html.gz`), gz);
  }
  // nginx sends the same response headers ours does (security headers and
  // a request id), so both put the same bytes on the wire.
  const ourHeaders = (await fetch(`${baseA}/`)).headers;
  const mirrored = ["content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy",
    "permissions-policy", "cross-origin-opener-policy", "cross-origin-resource-policy"]
    .map((h) => `add_header ${h} "${ourHeaders.get(h)}" always;`).join("\n    ");
  const portN = await freePort();
  const nginx = await startNginx(`
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  gzip_static on;
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
  console.error("row 1: cached pages (ours, then nginx)...");
  const [oursCached, nginxCached] = loadInTurn([baseA, `http://127.0.0.1:${portN}`], gzip);
  results.rows.cached = { ours: oursCached, nginx: nginxCached, rssMb: peakRssMb(a.pid) };
  nginx.kill("SIGTERM");
  a.kill("SIGTERM");

  // Row 2: renders, cache off, against Node with the same bundle and data.
  const portB = await freePort();
  const b = startSite({ ADDR: `127.0.0.1:${portB}`, PAGE_CACHE_CAPACITY: "0" });
  const baseB = `http://127.0.0.1:${portB}`;
  await waitFor(`${baseB}/readyz`);
  const data = {};
  for (const p of PAGES) data[p] = await (await fetch(`${baseB}/api/route-data?url=${encodeURIComponent(p)}`)).text();
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

  report(results);
  fs.writeFileSync(path.join(root, "bench/results.json"), JSON.stringify(results, null, 2));
  fs.writeFileSync(path.join(root, "bench/results.svg"), chart(results));
}

function newest(dir, suffix) {
  const hits = fs.readdirSync(dir).map((d) => path.join(dir, d, suffix)).filter((f) => fs.existsSync(f));
  hits.sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs);
  if (!hits.length) throw new Error("no release SSR bundle found");
  return hits[0];
}

function report(r) {
  const { cached, render, coldStartMs, weights } = r.rows;
  const f = (n, d = 0) => n.toFixed(d);
  const home = weights.find((w) => w.route === "/");
  const rows = [
    ["1. cached pages, req/s (mean of /, /blog, /pricing)", f(cached.nginx.rps), f(cached.ours.rps), f(cached.ours.rps / cached.nginx.rps, 2), ">= 0.80"],
    ["2. renders, pages/s (cache off)", f(render.node.rps), f(render.ours.rps), f(render.ours.rps / render.node.rps, 2), ">= 1.50"],
    [`   renders per core (ours over ${r.cores} cores, Node 1)`, f(render.node.rps), f(render.ours.rps / r.cores), f(render.ours.rps / r.cores / render.node.rps, 2), ">= 1.00"],
    ["3. cold start to first 200 on /, ms (median)", "-", f(coldStartMs), "-", "< 300"],
    ["4. JS on / first load, KB (brotli)", "-", f(home.jsKB, 1), "-", "<= 90"],
    ["   CSS on / first load, KB (brotli)", "-", f(home.cssKB, 1), "-", "-"],
    ["5. peak RSS during 1 / 2, MB", `- / ${f(render.nodeRssMb)}`, `${f(cached.rssMb)} / ${f(render.rssMb)}`, "-", "< 150"],
    ["6. latency cached p50 / p99, ms", `${f(cached.nginx.p50, 2)} / ${f(cached.nginx.p99, 2)}`, `${f(cached.ours.p50, 2)} / ${f(cached.ours.p99, 2)}`, "-", "-"],
    ["   latency renders p50 / p99, ms", `${f(render.node.p50, 2)} / ${f(render.node.p99, 2)}`, `${f(render.ours.p50, 2)} / ${f(render.ours.p99, 2)}`, "-", "-"],
  ];
  const head = ["row", "peer", "ours", "ratio", "target"];
  const table = [head, head.map(() => "---"), ...rows].map((c) => `| ${c.join(" | ")} |`).join("\n");
  console.log(`\nBenchmarks, ${r.date}, ${r.cores} cores (peers: nginx for row 1, Node ${process.version} for row 2)\n`);
  console.log(table);
  console.log("\nPage weight per route (brotli KB; a foreign chunk would be another route's code):\n");
  console.log(["| route | JS | CSS | other routes' chunks |", "| --- | --- | --- | --- |",
    ...weights.map((w) => `| ${w.route} | ${f(w.jsKB, 1)} | ${f(w.cssKB, 1)} | ${w.foreign.length ? w.foreign.join(", ") : "none"} |`)].join("\n"));
}

function chart(r) {
  const { cached, render } = r.rows;
  const bars = [
    ["cached: nginx", cached.nginx.rps, "#94a3b8"], ["cached: ours", cached.ours.rps, "#1f5ad6"],
    ["renders: Node", render.node.rps, "#94a3b8"], ["renders: ours", render.ours.rps, "#1f5ad6"],
  ];
  // Each pair on its own scale: cached pages are ~50x more than renders.
  const rows = bars.map(([label, v, colour], i) => {
    const pairMax = Math.max(bars[i - (i % 2)][1], bars[i - (i % 2) + 1][1]);
    const y = 40 + i * 44 + (i >= 2 ? 12 : 0);
    const w = Math.max(2, (v / pairMax) * 420);
    return `<text x="10" y="${y + 18}" font-size="13">${label}</text>` +
      `<rect x="140" y="${y}" width="${w.toFixed(1)}" height="28" fill="${colour}"/>` +
      `<text x="${(146 + w).toFixed(1)}" y="${y + 18}" font-size="12">${Math.round(v)} req/s</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="680" height="250" font-family="sans-serif">` +
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
