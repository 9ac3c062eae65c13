// HTTP/3 as a real browser meets it: Chromium loads every route of the
// route table over QUIC (the navigation's nextHopProtocol is h3) and
// hydrates, navigates client-side, and sends the contact form; then a page
// loaded over h3 runs a fetch loop (and form posts) through three
// `citizen-site upgrade`s, and no fetch fails: Chromium itself retries what
// a GOAWAY left unprocessed (RFC 9114, 5.2). Every acknowledged post is
// stored once.
//
// Chromium is forced onto QUIC for the test's origin alone, trusting the
// leaf certificate's key, without --disable-quic (tests/ops/chromium-quic.mjs,
// which holds the fetch loop too; tests/live_systemd.rs runs it through
// three `systemctl reload`s).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { launchOnQuic, protocol, spkiOf, startFetchLoop, stopFetchLoop } from "../ops/chromium-quic.mjs";
import { freePort } from "../ops/tools.mjs";
import { hydrated, onPages, TABLE_PATHS, watchConsole, watchedPages } from "./harness.mjs";

const builtBin = process.env.CITIZEN_SITE_BIN ?? path.resolve("target", "debug", "citizen-site");
let dir;
let bin;
let port;
let httpPort;
let origin;
let server;
let browser;
let spki;
/** The processes the upgrades started, by id ("upgraded: pid N serves"). */
const successors = [];

/** A self-signed certificate for localhost, and its key's SPKI SHA-256. */
function certificate() {
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
    "-days", "2", "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
  ], { stdio: "ignore" });
  return spkiOf(path.join(dir, "cert.pem"));
}

/** The binary where an upgrade replaces it (a new file renamed over it). */
function install() {
  fs.copyFileSync(builtBin, `${bin}.new`);
  fs.renameSync(`${bin}.new`, bin);
}

function siteEnv() {
  return {
    PATH: process.env.PATH,
    TLS_CERT: path.join(dir, "cert.pem"),
    TLS_KEY: path.join(dir, "key.pem"),
    HTTPS_ADDR: `127.0.0.1:${port}`,
    HTTP_ADDR: `127.0.0.1:${httpPort}`,
    SITE_URL: origin,
    DATABASE_URL: `sqlite://${dir}/site.db`,
    SAMPLE_TEAM: "true",
    RATE_LIMIT_PER_MINUTE: "0",
    RUST_LOG: process.env.RUST_LOG ?? "warn",
  };
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-e2e-h3-"));
  bin = path.join(dir, "citizen-site");
  install();
  spki = certificate();
  // HTTPS (and the same number over UDP for HTTP/3), and HTTP.
  port = await freePort();
  httpPort = await freePort();
  origin = `https://localhost:${port}`;
  server = spawn(bin, ["serve"], { env: siteEnv(), stdio: ["ignore", "inherit", "inherit"] });
  process.on("exit", () => server.kill("SIGKILL"));
  // NETLOG=file: Chromium's net log, to see why a fetch failed.
  browser = await launchOnQuic({ origin, spki, netlog: process.env.NETLOG });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
    const page = await browser.newPage();
    const ok = await page.goto(`${origin}/readyz`).then((r) => r?.ok(), () => false);
    await page.close();
    if (ok) break;
    if (Date.now() > deadline) throw new Error("server not ready over HTTP/3 after 60 s");
    await new Promise((r) => setTimeout(r, 250));
  }
});

after(async () => {
  await browser?.close();
  // The upgrades' processes are not this one's children: each is stopped
  // by the id its upgrade named.
  for (const pid of successors) {
    try { process.kill(pid, "SIGTERM"); } catch {}
  }
  server?.kill("SIGTERM");
  fs.rmSync(dir, { recursive: true, force: true });
});

test("every route of the route table loads over HTTP/3 and hydrates", async () => {
  const pages = watchedPages(() => browser.newPage({ viewport: { width: 1280, height: 800 } }));
  await onPages(pages.newPage, TABLE_PATHS, async (page, route) => {
    await page.goto(`${origin}${route}`, { waitUntil: "networkidle" });
    assert.equal(await protocol(page), "h3", `${route}: the navigation's protocol`);
    await hydrated(page);
  });
  assert.deepEqual(pages.problems(), []);
});

test("a client-side navigation and the contact form work over HTTP/3", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems = watchConsole(page);
  await page.goto(`${origin}/`, { waitUntil: "networkidle" });
  assert.equal(await protocol(page), "h3");
  await hydrated(page);
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Pricing" }).click();
  await page.waitForURL(`${origin}/pricing`);
  await page.getByRole("heading", { level: 1, name: "Pricing" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no full page load");
  const routeData = await page.evaluate(() =>
    performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/route-data")).map((e) => e.nextHopProtocol),
  );
  assert.ok(routeData.length > 0 && routeData.every((p) => p === "h3"), `route data over ${routeData}`);

  await page.goto(`${origin}/contact`, { waitUntil: "networkidle" });
  await hydrated(page);
  await page.getByLabel("Community Name").fill("Quic Town");
  await page.getByLabel("Email").fill("ana@quic.example");
  await page.getByLabel("Loyalty").check();
  await page.getByRole("button", { name: /submit/i }).click();
  await page.getByText("Request submitted!").waitFor();
  const posted = await page.evaluate(() =>
    performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/api/save-to-notion")).map((e) => e.nextHopProtocol),
  );
  assert.deepEqual(posted, ["h3"]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a page's fetches over HTTP/3 all succeed through three upgrades", async () => {
  const page = await browser.newPage();
  await page.goto(`${origin}/about`, { waitUntil: "networkidle" });
  assert.equal(await protocol(page), "h3");
  await startFetchLoop(page);
  await new Promise((r) => setTimeout(r, 2000));
  for (let upgrade = 0; upgrade < 3; upgrade++) {
    install();
    const said = execFileSync(bin, ["upgrade"], { env: siteEnv(), encoding: "utf8" });
    const pid = said.match(/upgraded: pid (\d+) serves/);
    assert.ok(pid, said);
    successors.push(Number(pid[1]));
    await new Promise((r) => setTimeout(r, 2500));
  }
  const load = await stopFetchLoop(page);
  console.log(`Chromium's fetches over HTTP/3 through 3 upgrades: ${load.ok} answered, ${load.failed.length} failed`);
  assert.deepEqual(load.failed, []);
  assert.ok(load.ok > 100, `${load.ok} fetches`);
  assert.deepEqual(load.protocols.filter((p) => p !== "h3"), [], `every fetch over h3: ${load.protocols}`);
  const stored = execFileSync(bin, ["intro", "list"], { env: siteEnv(), encoding: "utf8" });
  for (const name of load.posted) {
    assert.equal(stored.split("\n").filter((l) => l.includes(`${name} `)).length, 1, `${name} stored once`);
  }
  await page.close();
});
