// The benchmark suite: `node bench/run.mjs` (see docs/performance.md).
// Builds the release binary, starts it, and prints one table: each row our
// figure, the peer's figure measured in the same run, and the ratio. The
// docs/performance.md's table is written from its JSON output (bench/report.mjs).
//
//   1. cached pages, instructions per request: each of PAGES in gzip and
//      brotli under valgrind's callgrind, against nginx serving the same
//      bytes and headers (bench/instructions.mjs); CALLGRIND_RUNS runs of
//      each, fresh processes (target: at most nginx's on every page, and the
//      runs within 1 % of each other)
//   2. cached pages, req/s: wrk on each of PAGES against the same nginx
//      (gzip); each side warmed up, then the two in turn page by page,
//      BENCH_ROUNDS times; a page's ratio is the ratio of the medians, and
//      the row's figure is the worst page's (target: at least 0.9 of nginx)
//   3. 1,000 open keep-alive connections, and a new connection per request:
//      p50 / p99 latency of the pages in turn, against nginx, in turn
//   4. renders with the page cache off vs a Node server running the same
//      SSR bundle with the same data
//   5. cold start to the first 200 on / (median of runs)
//   6. page weight per route (compressed JS and CSS on first load)
//   7. peak RSS during rows 2 and 4
//   8. latency p50 / p99 for rows 2 and 4
//   9. the release binary's size (stripped)
//  10. requests failed during 5 upgrades under load over HTTPS, and the
//      worst latency during a swap against the same load without swaps
//      (bench/swaps.mjs; target: none failed)
//  16. a post published: `citizen-site pack` after a one-word change
//      against `cargo build --release` after the same, and each packed
//      binary published under load (bench/publish.mjs, run on its own;
//      target: pack at most 10 s, none failed)
//  15. the worst wait during `systemctl reload` against `systemctl restart`
//      under load, under a live systemd (bench/reload.mjs, run on its own:
//      it needs root; target: under 100 ms, none failed)
//  11. to 14. over TLS against the same nginx with the same certificate
//      (bench/tls.mjs): instructions per cached hit (HTTP/1.1 and HTTP/2)
//      and per new connection (full and resumed handshake); req/s with
//      h2load (HTTP/2 and HTTP/1.1); row 3 over TLS; memory per idle TLS
//      connection (targets: instructions at most nginx's, req/s at least;
//      memory: a goal, bench/report.mjs's GOALS)
//
// Row 13 carries a tail target: p50 with a new TLS connection per request
// at most nginx's; p99 at 1,000 open TLS connections, and both over plain
// HTTP (row 3), are goals, printed and listed as open when missed.
//
// Exits non-zero when a row misses its target. Needs wrk, h2load, nginx
// with its brotli_static module, openssl and valgrind (Debian: wrk
// nghttp2-client nginx libnginx-mod-http-brotli-static openssl valgrind). Writes bench/results.json,
// bench/results.svg and docs/performance.md's table.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, mixScript, need, siteBinary, startNginx, startSite as startOpsSite, tempDir, waitFor, wrk as wrkScript } from "../tests/ops/tools.mjs";
import {
  bodies, CONNECTIONS as CONNECTIONS_COUNTED, count as countInstructions, COUNTED_ENV, ENCODINGS, rawGet, REQUESTS as REQUESTS_COUNTED, sha256, SITE_URL, startOursCounted, valgrind, WINDOWS,
} from "./instructions.mjs";
import { benchTable, writeReadme } from "./report.mjs";
import { swapRow, UPGRADES } from "./swaps.mjs";
import { certificate, countTls, h2load, HANDSHAKES, idleMemory, nginxPids, nginxTlsServer, readyTls, startOursTls, TLS_ENCODING, TLS_PAGE, TLS_REQUESTS } from "./tls.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
export const DURATION = process.env.BENCH_DURATION ?? "10s";
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
// Every kind of page: no data, a database table, all posts, one post, Stripe.
export const PAGES = ["/", "/about", "/blog", "/blog/brussels-pay-launch", "/pricing"];
const RENDER_PAGES = ["/", "/blog", "/pricing"];
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 7);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP = process.env.BENCH_WARMUP ?? "2s";
const CALLGRIND_RUNS = Number(process.env.BENCH_CALLGRIND_RUNS ?? 2);
/** Row 3: open keep-alive connections, and connections at once when each
 *  carries one request. */
export const MANY = Number(process.env.BENCH_MANY_CONNECTIONS ?? 1000);
export const CLOSE_CONNECTIONS = Number(process.env.BENCH_CLOSE_CONNECTIONS ?? CONNECTIONS);
const LATENCY_ROUNDS = Number(process.env.BENCH_LATENCY_ROUNDS ?? 3);
/** Row 14: idle TLS connections held open. */
const IDLE_CONNECTIONS = (process.env.BENCH_IDLE_CONNECTIONS ?? "1000,10000").split(",").map(Number);
export const NGINX_BROTLI = "load_module /usr/lib/nginx/modules/ngx_http_brotli_static_module.so;";
const children = [];
process.on("exit", () => children.forEach((c) => c.kill("SIGKILL")));
let bin;

function startSite(env) {
  const { ADDR, ...rest } = env;
  return startOpsSite(bin, Number(ADDR.split(":")[1]), { SITE_URL, ...rest });
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

/** The file nginx serves a page from (its encodings beside it). */
const fileName = (page) => (page === "/" ? "index" : page.slice(1));

/** Headers nginx makes itself (the date, the body's length, encoding and
 *  ETag, the connection's) or from a variable (the request id). */
const OWN_HEADERS = new Set(["date", "content-length", "content-encoding", "etag", "x-request-id", "content-type", "connection", "keep-alive"]);

/** nginx serving the pages' files as ours serves them: each page with the
 *  response headers ours sends for it (security headers, Cache-Control,
 *  Vary), a request id, an ETag and the type with its charset, so both put
 *  the same bytes on the wire, in gzip or brotli from files compressed
 *  beforehand. Its configuration is the fastest found for these files:
 *  sendfile off (for bodies of a few KB, one writev of headers and body
 *  beats writev + sendfile + the TCP_CORK calls of tcp_nopush; with
 *  sendfile on, nginx read 25-35k req/s here against 36-39k without) and
 *  an open-file cache (no open/fstat/close per request: 44-55k); no access
 *  log (ours writes none for a hit either). */
export function nginxConfig(www, port, pageHeaders, tls = null) {
  const locations = (headersOf) => PAGES.map((p) => {
    const headers = Object.entries(headersOf[p])
      .filter(([h]) => !OWN_HEADERS.has(h))
      .map(([h, v]) => `add_header ${h} "${v.replace(/["\\]/g, "\\$&")}" always;`);
    return `location = ${p} { ${headers.join(" ")} add_header x-request-id $request_id always; try_files /${fileName(p)}.html =404; }`;
  }).join("\n    ");
  const plain = port ? `
  server {
    listen 127.0.0.1:${port} backlog=1024;
    root ${www};
    ${locations(pageHeaders)}
  }` : "";
  // Over TLS with the headers ours sends over TLS (HSTS among them).
  const secure = tls ? nginxTlsServer(tls.port, tls.certs, `root ${www};\n    ${locations(tls.pageHeaders)}`) : "";
  return `
  sendfile off; keepalive_requests 1000000;
  open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s;
  gzip_static on; brotli_static on; etag on; server_tokens off;
  default_type text/html; charset utf-8;${plain}${secure}`;
}

/** The pages as ours on `port` serves them, written where nginx serves
 *  them from (`www`, in each encoding), and the headers ours sent with each. */
export async function mirror(port) {
  const www = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-nginx-"));
  const pageHeaders = {};
  for (const p of PAGES) {
    const name = fileName(p);
    fs.mkdirSync(path.dirname(path.join(www, name)), { recursive: true });
    for (const [encoding, suffix] of [["identity", ""], ["gzip", ".gz"], ["br", ".br"]]) {
      const res = await rawGet(port, p, encoding);
      if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
      fs.writeFileSync(path.join(www, `${name}.html${suffix}`), res.body);
      pageHeaders[p] = res.headers;
    }
  }
  return { www, pageHeaders };
}

/** A run's figures without the dump files' names. */
const strip = (figures) => Object.fromEntries(Object.entries(figures).map(([p, byEnc]) => [p, Object.fromEntries(Object.entries(byEnc).map(([e, v]) => [e, v.instructions]))]));

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** How far a server's runs of one figure spread: the largest over the smallest. */
const spreadOf = (xs) => Math.max(...xs) / Math.min(...xs) - 1;

/** Row 1 from its runs: per page and encoding each run's figure of both
 *  servers and the ratio of their means; the worst ratio; and how far the
 *  runs of one server on one page spread (the largest, over the smallest). */
function instructionRows(runs) {
  const pages = PAGES.flatMap((page) => ENCODINGS.map((encoding) => {
    const ours = runs.map((r) => r.ours[page][encoding]);
    const nginx = runs.map((r) => r.nginx[page][encoding]);
    return { page, encoding, ours, nginx, ratio: mean(ours) / mean(nginx) };
  }));
  const worst = pages.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const spread = Math.max(...pages.flatMap((p) => [spreadOf(p.ours), spreadOf(p.nginx)]));
  return { requests: REQUESTS_COUNTED, connections: CONNECTIONS_COUNTED, windows: WINDOWS, runs: runs.length, pages, worst: { page: worst.page, encoding: worst.encoding, ratio: worst.ratio }, spread };
}

/** Row 11 from its runs: per kind (keep-alive HTTP/1.1 and HTTP/2, full
 *  and resumed handshake) each run's figure of both servers and the
 *  ratio of their means, the worst ratio, and how far runs spread. */
function tlsInstructionRows(runs) {
  const kinds = ["keepAliveH1", "keepAliveH2", "fullHandshake", "resumedHandshake"].map((kind) => {
    const ours = runs.map((r) => r.ours[kind].instructions);
    const nginx = runs.map((r) => r.nginx[kind].instructions);
    return { kind, ours, nginx, ratio: mean(ours) / mean(nginx) };
  });
  const worst = kinds.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  return {
    page: TLS_PAGE, encoding: TLS_ENCODING, requests: TLS_REQUESTS, handshakes: HANDSHAKES, connections: CONNECTIONS_COUNTED, windows: WINDOWS,
    runs: runs.length, negotiated: runs[0].negotiated, kinds, worst: { kind: worst.kind, ratio: worst.ratio },
    spread: Math.max(...kinds.flatMap((k) => [spreadOf(k.ours), spreadOf(k.nginx)])),
  };
}

/** Row 12: h2load on ours and nginx in turn, LATENCY_ROUNDS times, each
 *  warmed up; the median req/s of each, and every failed request. */
function h2loadInTurn([ours, peer], { h1 }) {
  const urls = (base) => PAGES.map((p) => `${base}${p}`);
  const run = (base) => h2load(urls(base), { h1, connections: CONNECTIONS, duration: DURATION, warmup: WARMUP, headers: { "accept-encoding": "gzip" } });
  const rounds = { ours: [], nginx: [] };
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    rounds.ours.push(run(ours));
    rounds.nginx.push(run(peer));
  }
  const side = (rs) => ({ rps: median(rs.map((r) => r.rps)), runs: rs.map((r) => r.rps), failed: rs.reduce((n, r) => n + r.failed, 0), requests: rs.reduce((n, r) => n + r.requests, 0) });
  return { connections: CONNECTIONS, streams: h1 ? 1 : 10, ours: side(rounds.ours), nginx: side(rounds.nginx) };
}

/** Ours and nginx in turn, LATENCY_ROUNDS times, each with `connections`
 *  connections walking the pages (after a warm-up of each): per side the
 *  median p50, p99 and req/s of the rounds, and every error. */
async function latencyInTurn([ours, peer], connections, headers) {
  const [oursRounds, nginxRounds] = await roundsInTurn([ours, peer], connections, headers);
  return { connections, ours: latencySide(oursRounds), nginx: latencySide(nginxRounds) };
}

/** Each of `bases` warmed up, then the bases in turn LATENCY_ROUNDS times,
 *  each round wrk with `connections` connections walking the pages with
 *  `headers`; per base its rounds (wrk's counters). `around(i, round)`
 *  runs base i's round (bench/tails.mjs measures the server around it). */
export async function roundsInTurn(bases, connections, headers, around = (i, round) => round()) {
  const script = mixScript(PAGES, { headers });
  const run = (url, duration) => wrkScript({ url, script, connections, duration, timeout: "5s" });
  for (const base of bases) await run(base, WARMUP);
  const rounds = bases.map(() => []);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const [i, base] of bases.entries()) rounds[i].push(await around(i, () => run(base, DURATION)));
  }
  return rounds;
}

/** One side of rows 3 and 13 from its rounds: the median p50, p99 and
 *  req/s, and every failed request. */
export function latencySide(rs) {
  return {
    p50: median(rs.map((r) => r.p50_us / 1000)),
    p99: median(rs.map((r) => r.p99_us / 1000)),
    rps: median(rs.map((r) => r.requests / (r.duration_us / 1e6))),
    errors: rs.reduce((n, r) => n + r.client_errors + r.server_errors + r.socket_errors + r.timeouts, 0),
    requests: rs.reduce((n, r) => n + r.requests, 0),
  };
}

async function main() {
  need("wrk", "wrk");
  need("nginx", "nginx");
  need("valgrind", "valgrind");
  need("h2load", "nghttp2-client");
  need("openssl", "openssl");
  if (!fs.existsSync("/usr/lib/nginx/modules/ngx_http_brotli_static_module.so")) throw new Error("nginx's brotli_static module is needed: apt-get install libnginx-mod-http-brotli-static");
  delete process.env.CITIZEN_SITE_BIN; // always the release build
  bin = siteBinary();
  const results = {
    date: new Date().toISOString().slice(0, 10),
    cores: os.cpus().length,
    node: process.version,
    nginx: execFileSync("sh", ["-c", "nginx -v 2>&1"], { encoding: "utf8" }).trim().replace(/^nginx version: /, ""),
    valgrind: execFileSync("valgrind", ["--version"], { encoding: "utf8" }).trim(),
    settings: { duration: DURATION, connections: CONNECTIONS, rounds: ROUNDS, warmup: WARMUP, latencyRounds: LATENCY_ROUNDS },
    rows: {},
  };
  results.rows.binaryMb = fs.statSync(bin).size / (1 << 20);

  // Row 5 first, on a quiet machine: cold start.
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

  // Row 6: page weight per route.
  const routes = JSON.parse(fs.readFileSync(path.join(root, "content/routes.json"), "utf8")).routes;
  const weights = [];
  for (const r of routes) {
    const url = r.path.replace(":postId", "nfc-integration");
    const html = await (await fetch(`${baseA}${url}`)).text();
    // The boot module, and the modules it loads (listed in data-modules).
    const listed = html.match(/ data-modules="([^"]+)"/)?.[1].split(" ") ?? [];
    const js = [...[...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]), ...listed];
    // What the boot module fetches of the stylesheet: the rules a page may
    // leave out of its inline CSS (data-css, server/css/rest.rs); the whole
    // stylesheet only where those cannot be put in.
    const css = [html.match(/ data-css="([^"]+)"/)[1]];
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

  // The peer of rows 1 to 3: nginx serving the same bytes with the same headers.
  const { www, pageHeaders } = await mirror(portA);
  const expected = await bodies(portA, PAGES);
  a.kill("SIGTERM");

  // The peer over TLS: the same certificate, and the headers ours sends
  // over TLS (HSTS among them).
  const certs = certificate(tempDir("citizen-bench-tls-"));
  const tlsHeaders = {};
  {
    const port = await freePort();
    const tlsSite = await startOursTls(bin, certs, port, await freePort());
    for (const p of PAGES) {
      const res = await rawGet(port, p, "br", { ca: certs.ca });
      if (res.status !== 200) throw new Error(`${p} over TLS: ${res.status}`);
      if (sha256(res.body) !== expected[p].br) throw new Error(`${p}: other bytes over TLS`);
      tlsHeaders[p] = res.headers;
    }
    tlsSite.kill("SIGTERM");
  }
  const tlsNginx = (port, tlsPort) => nginxConfig(www, port, pageHeaders, { port: tlsPort, certs, pageHeaders: tlsHeaders });

  // Row 14 early, on a quiet machine (and before the long rows: ours must
  // have every connection open within its 10 s bound on a silent one):
  // memory per idle TLS connection, each server fresh per count.
  results.rows.tlsMemory = [];
  for (const count of IDLE_CONNECTIONS) {
    console.error(`row 14: ${count} idle TLS connections (ours, then nginx)...`);
    const port = await freePort();
    const ours = await startOursTls(bin, certs, port, await freePort());
    const oursMemory = await idleMemory(() => [ours.pid], port, certs.ca, PAGES, count);
    ours.kill("SIGTERM");
    const portM = await freePort();
    const peer = await startNginx(tlsNginx(null, portM), () => readyTls(portM, certs.ca, 60_000, "/"), { workers: "auto", main: NGINX_BROTLI, connections: count + 1024 });
    const nginxMemory = await idleMemory(() => nginxPids(peer.pid), portM, certs.ca, PAGES, count);
    peer.kill("SIGTERM");
    results.rows.tlsMemory.push({ connections: count, ours: oursMemory, nginx: nginxMemory });
  }

  // Row 1: instructions per cached request, each server under callgrind.
  const counted = tempDir("citizen-callgrind-");
  const runs = [];
  for (let run = 0; run < CALLGRIND_RUNS; run++) {
    console.error(`row 1: instructions per request, run ${run + 1} of ${CALLGRIND_RUNS} (ours, then nginx, under callgrind)...`);
    const ours = await startOursCounted(bin, counted, `ours-${run}`);
    const oursFigures = await countInstructions(ours.child.pid, ours.port, ours.out, PAGES, expected);
    ours.child.kill("SIGKILL");
    const portC = await freePort();
    const out = path.join(counted, `nginx-${run}.out`);
    const peer = await startNginx(nginxConfig(www, portC, pageHeaders), `http://127.0.0.1:${portC}/`, {
      workers: 0, main: NGINX_BROTLI, wrap: valgrind(out), readyMs: 120_000,
    });
    const nginxFigures = await countInstructions(peer.pid, portC, out, PAGES, expected);
    peer.kill("SIGKILL");
    runs.push({ ours: strip(oursFigures), nginx: strip(nginxFigures) });
  }
  results.rows.instructions = instructionRows(runs);

  // Row 11: the same over TLS, and the handshakes.
  const tlsRuns = [];
  for (let run = 0; run < CALLGRIND_RUNS; run++) {
    console.error(`row 11: instructions over TLS, run ${run + 1} of ${CALLGRIND_RUNS} (ours, then nginx, under callgrind)...`);
    const sha = expected[TLS_PAGE][TLS_ENCODING];
    const portO = await freePort();
    const outO = path.join(counted, `ours-tls-${run}.out`);
    const ours = await startOursTls(bin, certs, portO, await freePort(), { wrap: valgrind(outO), readyMs: 600_000, env: COUNTED_ENV });
    const oursTls = await countTls(ours.pid, portO, outO, certs.ca, sha);
    ours.kill("SIGKILL");
    const portT = await freePort();
    const outN = path.join(counted, `nginx-tls-${run}.out`);
    const peer = await startNginx(tlsNginx(null, portT), () => readyTls(portT, certs.ca, 120_000, "/"), {
      workers: 0, main: NGINX_BROTLI, wrap: valgrind(outN),
    });
    const nginxTls = await countTls(peer.pid, portT, outN, certs.ca, sha);
    peer.kill("SIGKILL");
    const [o, n] = [oursTls.negotiated, nginxTls.negotiated];
    if (o.protocol !== n.protocol || o.cipher !== n.cipher || o.group !== n.group) {
      throw new Error(`row 11: the servers negotiated differently: ours ${JSON.stringify(o)}, nginx ${JSON.stringify(n)}`);
    }
    tlsRuns.push({ ours: oursTls.figures, nginx: nginxTls.figures, negotiated: o });
  }
  results.rows.tlsInstructions = tlsInstructionRows(tlsRuns);

  // Rows 2 and 3: the same pages under load (a fresh process: callgrind's
  // runs left nothing in this one).
  const portD = await freePort();
  const d = startSite({ ADDR: `127.0.0.1:${portD}` });
  const baseD = `http://127.0.0.1:${portD}`;
  await waitFor(`${baseD}/readyz`);
  const [portN, portNT] = [await freePort(), await freePort()];
  const nginx = await startNginx(tlsNginx(portN, portNT), `http://127.0.0.1:${portN}/`, { workers: "auto", main: NGINX_BROTLI });
  const baseN = `http://127.0.0.1:${portN}`;
  const gzip = { "Accept-Encoding": "gzip" };
  console.error("row 2: cached pages (each warmed up, then ours and nginx in turn)...");
  results.rows.cached = { ...loadInTurn([baseD, baseN], gzip), rssMb: peakRssMb(d.pid) };
  console.error(`row 3: ${MANY} open connections, and a new connection per request (ours and nginx in turn)...`);
  results.rows.connections = {
    keepAlive: await latencyInTurn([baseD, baseN], MANY, gzip),
    perRequest: await latencyInTurn([baseD, baseN], CLOSE_CONNECTIONS, { ...gzip, Connection: "close" }),
  };
  d.kill("SIGTERM");

  // Rows 12 and 13: over TLS, against the same nginx's HTTPS port.
  const portE = await freePort();
  const e = await startOursTls(bin, certs, portE, await freePort());
  const [baseE, baseNT] = [`https://127.0.0.1:${portE}`, `https://127.0.0.1:${portNT}`];
  console.error("row 12: req/s over TLS, HTTP/2 and HTTP/1.1 (h2load, ours and nginx in turn)...");
  results.rows.tlsThroughput = {
    http2: h2loadInTurn([baseE, baseNT], { h1: false }),
    http1: h2loadInTurn([baseE, baseNT], { h1: true }),
  };
  console.error(`row 13: ${MANY} open TLS connections, and a new TLS connection per request (ours and nginx in turn)...`);
  results.rows.tlsConnections = {
    keepAlive: await latencyInTurn([baseE, baseNT], MANY, gzip),
    perRequest: await latencyInTurn([baseE, baseNT], CLOSE_CONNECTIONS, { ...gzip, Connection: "close" }),
  };
  e.kill("SIGTERM");
  nginx.kill("SIGTERM");


  // Row 4: renders, cache off, against Node with the same bundle and data.
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
  console.error("row 4: renders (ours with the cache off, then Node)...");
  const oursRender = load(baseB, {});
  const nodeRender = load(`http://127.0.0.1:${portNode}`, {});
  results.rows.render = { ours: oursRender, node: nodeRender, rssMb: peakRssMb(b.pid), nodeRssMb: peakRssMb(node.pid) };
  node.kill("SIGTERM");
  b.kill("SIGTERM");

  console.error(`row 10: ${UPGRADES} upgrades under load (HTTPS)...`);
  results.rows.swaps = await swapRow(bin);

  // Row 15 needs a live systemd (root): measured on its own
  // (node bench/reload.mjs), and kept from its last run here.
  const previous = JSON.parse(fs.readFileSync(path.join(root, "bench/results.json"), "utf8"));
  if (previous.rows?.reloads) results.rows.reloads = previous.rows.reloads;
  // Row 16 builds a copy of the crate: measured on its own too
  // (node bench/publish.mjs).
  if (previous.rows?.publish) results.rows.publish = previous.rows.publish;
  // The photos' row needs the commit before photo processing built:
  // measured on its own (node bench/photos.mjs --record).
  if (previous.rows?.photos) results.rows.photos = previous.rows.photos;
  fs.writeFileSync(path.join(root, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  fs.writeFileSync(path.join(root, "bench/results.svg"), chart(results));
  const { rows, missed, open } = benchTable(results);
  console.log(`\nBenchmarks, ${results.date}, ${results.cores} cores (peers: ${results.nginx} for rows 1 to 3 and, over TLS, 11 to 14; Node ${results.node} for row 4)\n`);
  console.log(rows);
  writeReadme();
  if (open.length) console.error(`\nOPEN (goals, not gated): ${open.join("; ")}`);
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

// Measures when run; bench/tails.mjs imports its pieces.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === "--chart-only") {
    // Redraw the chart from the last results.
    const r = JSON.parse(fs.readFileSync(path.join(root, "bench/results.json"), "utf8"));
    fs.writeFileSync(path.join(root, "bench/results.svg"), chart(r));
  } else {
    main().catch((e) => {
      console.error(e);
      process.exit(1);
    });
  }
}
