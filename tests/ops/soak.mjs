// The soak: a fixed-length load over a mix of routes at 256 connections,
// then a report of errors (target: none), p99 latency, and resident memory
// after the warm-up and at the end (target: no more than 10% growth).
//
//   node tests/ops/soak.mjs            (npm run soak)
//
// SOAK_DURATION (default 2m), SOAK_WARMUP (20s), SOAK_CONNECTIONS (256).
// Uses $CITIZEN_SITE_BIN, else builds the release binary. Needs wrk
// (Debian's package of that name).
//
// A 404 is an error on every route but the 404 route (a fresh unknown URL
// each time), where anything but 404 is. wrk cannot tell which request an
// answer is for, so the 404 route runs in its own wrk, alongside the mix,
// with its share of the connections.
import { freePort, mixScript, need, rssMb, siteBinary, sleep, startSite, table, waitFor, wrk } from "./tools.mjs";

const DURATION = process.env.SOAK_DURATION ?? "2m";
const WARMUP = process.env.SOAK_WARMUP ?? "20s";
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 256);
const MAX_GROWTH = 0.1;

// Cached pages, renders (a filtered blog and a fresh 404 each time, never
// cached), loader JSON with a database read, and a hashed asset.
const MIX = [
  "/", "/wallets", "/blog", "/blog/nfc-integration", "/pricing", "/about", "/community", "/contact",
  "/ctzn", "/privacy", "/api/route-data?url=/about", "/robots.txt", "/blog?type=Events",
  "/services", "/nfc-wallet",
];
const NOT_FOUND = "/no-such-page-{n}";
const ROUTES = MIX.length + 2; // the mix, the asset and the 404 route
// The 404 route's share of the connections, as if it were one route of the mix.
const NOT_FOUND_CONNECTIONS = Math.max(2, Math.round(CONNECTIONS / ROUTES));

need("wrk", "wrk");
const bin = siteBinary();
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const site = startSite(bin, port);
await waitFor(`${base}/readyz`);
const home = await (await fetch(`${base}/`)).text();
const asset = home.match(/src="(\/assets\/[^"]+\.js)"/)[1];
const script = mixScript([...MIX, asset]);
const notFoundScript = mixScript([NOT_FOUND], { expect: 404 });
const load = (duration) =>
  Promise.all([
    wrk({ url: base, script, connections: CONNECTIONS - NOT_FOUND_CONNECTIONS, duration }),
    wrk({ url: base, script: notFoundScript, connections: NOT_FOUND_CONNECTIONS, duration }),
  ]);

console.error(`soak: warm-up ${WARMUP} at ${CONNECTIONS} connections...`);
await load(WARMUP);
const rssStart = rssMb(site.pid);

console.error(`soak: ${DURATION} at ${CONNECTIONS} connections...`);
const samples = [];
const sampler = setInterval(() => samples.push(rssMb(site.pid)), 1000);
const [run, notFound] = await load(DURATION);
clearInterval(sampler);
await sleep(500);
const rssEnd = rssMb(site.pid);
const alive = (await fetch(`${base}/readyz`)).ok;
site.kill("SIGTERM");

const sum = (key) => run[key] + notFound[key];
const [clientErrors, serverErrors, socketErrors, timeouts] = ["client_errors", "server_errors", "socket_errors", "timeouts"].map(sum);
// On the 404 route, an answer that is not a 404 (a page where none exists).
const wrongAnswers = notFound.wrong;
const errors = clientErrors + serverErrors + socketErrors + timeouts + wrongAnswers;
const growth = rssEnd / rssStart - 1;
const f = (n, d = 1) => n.toFixed(d);
console.log(`\nSoak, ${new Date().toISOString().slice(0, 10)}: ${DURATION} over ${ROUTES} routes at ${CONNECTIONS} connections (after ${WARMUP} warm-up)\n`);
console.log(
  table(
    ["measure", "value", "target"],
    [
      ["requests (404 route)", `${run.requests + notFound.requests} (${notFound.requests}, all 404: ${notFound.ok})`, "-"],
      [
        "errors (5xx, 4xx other than the 404 route's 404, not 404 on the 404 route, socket errors, timeouts)",
        `${errors} (${serverErrors} / ${clientErrors} / ${wrongAnswers} / ${socketErrors} / ${timeouts})`,
        "0",
      ],
      ["latency p50 / p99, ms (404 route)", `${f(run.p50_us / 1000, 2)} / ${f(run.p99_us / 1000, 2)} (${f(notFound.p50_us / 1000, 2)} / ${f(notFound.p99_us / 1000, 2)})`, "-"],
      ["RSS after warm-up / at end / peak, MB", `${f(rssStart)} / ${f(rssEnd)} / ${f(Math.max(rssEnd, ...samples))}`, "-"],
      ["RSS growth", `${f(growth * 100)}%`, `<= ${MAX_GROWTH * 100}%`],
    ],
  ),
);
const failures = [];
if (errors) failures.push(`${errors} errors`);
if (notFound.ok === 0) failures.push("the 404 route was never answered 404");
if (growth > MAX_GROWTH) failures.push(`RSS grew ${f(growth * 100)}%`);
if (!alive) failures.push("not ready after the soak");
if (failures.length) {
  console.error(`\nsoak FAILED: ${failures.join(", ")}`);
  process.exit(1);
}
console.log("\nsoak passed");
process.exit(0);
