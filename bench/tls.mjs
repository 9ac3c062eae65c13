// The bench on the path visitors take: HTTPS, HTTP/1.1 and HTTP/2, against
// nginx serving the same bytes with the same headers and the same
// certificate (an ECDSA P-256 leaf of a CA made here), TLS 1.3 with the
// same key exchange and cipher on both (checked, not assumed). bench/run.mjs
// draws rows 11 to 14 from here:
//
//  11. instructions (callgrind, as row 1): per cached hit over TLS
//      keep-alive connections, HTTP/1.1 and HTTP/2; per full handshake plus
//      one request; per resumed handshake plus one request
//  12. requests per second at 64 connections, HTTP/2 (several streams each)
//      and HTTP/1.1 over TLS (h2load)
//  13. p50 / p99 at 1,000 open TLS connections, and with a new TLS
//      connection per request (wrk, as row 3)
//  14. memory: resident memory with 1,000 and 10,000 idle TLS connections,
//      and what each connection adds
//
//   node bench/tls.mjs
//
// alone measures row 11 for our server only, one run, each figure beside
// the recorded run's (bench/results.json) and how far from it, in %.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import path from "node:path";
import { freePort, need, root, siteBinary, sleep, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { bodies, checkAnswer, connection, CONNECTIONS, COUNTED_ENV, fmtChange, requestBytes, SITE_URL, valgrind, windows } from "./instructions.mjs";

/** Requests per window of row 11's keep-alive rows: the connections are
 *  opened (and their handshakes made) before the warm-up, not counted. */
export const TLS_REQUESTS = Number(process.env.BENCH_CALLGRIND_TLS_REQUESTS ?? 2000);
/** Connections per window of row 11's handshake rows, each carrying one
 *  request, HANDSHAKE_CLIENTS at a time. */
export const HANDSHAKES = Number(process.env.BENCH_CALLGRIND_HANDSHAKES ?? 200);
const HANDSHAKE_CLIENTS = 4;
/** Row 14's client processes, opening their shares of the connections at once. */
const IDLE_CLIENTS = 2;
/** The page and encoding of row 11 (what a browser asks for). */
export const TLS_PAGE = "/";
export const TLS_ENCODING = "br";

/** A CA of the bench's own and a leaf it signed for localhost and
 *  SITE_URL's host, both ECDSA P-256, in `dir`: cert.pem, key.pem, ca.pem. */
export function certificate(dir) {
  const run = (args) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  run(["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench CA"]);
  run(["req", ...ec, "-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=localhost"]);
  // Also for SITE_URL's host: the server refuses a certificate that is
  // not for the site it names (the clients ask for localhost).
  fs.writeFileSync(path.join(dir, "ext"), `subjectAltName=DNS:localhost,DNS:${new URL(SITE_URL).hostname}\nbasicConstraints=CA:FALSE\n`);
  run(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "cert.pem", "-days", "2", "-extfile", "ext"]);
  return { cert: path.join(dir, "cert.pem"), key: path.join(dir, "key.pem"), caFile: path.join(dir, "ca.pem"), ca: fs.readFileSync(path.join(dir, "ca.pem")) };
}

/** Resolves once the HTTPS port `port` answers `page` with a 200. */
export async function readyTls(port, ca, ms = 60_000, page = "/readyz") {
  const deadline = Date.now() + ms;
  for (;;) {
    const status = await new Promise((resolve) => {
      https.get({ host: "127.0.0.1", port, servername: "localhost", path: page, ca, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on("error", () => resolve(0));
    });
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`https://127.0.0.1:${port}${page} did not answer 200 in ${ms / 1000} s`);
    await sleep(100);
  }
}

/** Our server facing the internet on `port` with the bench's certificate
 *  (its HTTP port on `httpPort`), as the bench's client may load it: no
 *  cap per client address (every connection comes from 127.0.0.1) and
 *  room for row 14's connections. `wrap` runs it under callgrind. */
export async function startOursTls(bin, certs, port, httpPort, { wrap = [], env = {}, readyMs = 60_000 } = {}) {
  const child = startSite(bin, port, {
    TLS_CERT: certs.cert,
    TLS_KEY: certs.key,
    HTTPS_ADDR: `127.0.0.1:${port}`,
    HTTP_ADDR: `127.0.0.1:${httpPort}`,
    SITE_URL,
    MAX_CONNECTIONS: "16000",
    MAX_CONNECTIONS_PER_CLIENT: "16000",
    ...env,
  }, { wrap, stdio: ["ignore", "ignore", wrap.length ? "ignore" : "inherit"] });
  await readyTls(port, certs.ca, readyMs);
  return child;
}

/** nginx's server block for HTTPS on `port`: HTTP/2 and HTTP/1.1 by ALPN
 *  (nginx 1.22 takes `listen ... ssl http2`), TLS 1.2 and 1.3 as ours, its
 *  default session resumption (stateless tickets under a key made at
 *  start; no session cache), `body` inside. */
export function nginxTlsServer(port, certs, body) {
  return `
  server {
    listen 127.0.0.1:${port} ssl http2 backlog=1024;
    ssl_certificate ${certs.cert};
    ssl_certificate_key ${certs.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ${body}
  }`;
}

/** One HTTP/2 session over TLS, resolved once it is up. */
function h2Session(port, ca) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca, servername: "localhost" });
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

/** One GET on an HTTP/2 session: its status, headers and body as sent. */
function h2Get(session, page, encoding) {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":path": page, "user-agent": "bench", accept: "text/html", "accept-encoding": encoding });
    let headers = {};
    const chunks = [];
    req.on("response", (h) => (headers = h));
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve({ status: Number(headers[":status"]), headers, body: Buffer.concat(chunks) }));
    req.on("error", reject);
    req.end();
  });
}

/** `count` requests spread over `clients`, each of which sends its next
 *  when its last is answered. */
async function spread(count, clients, send) {
  let left = count;
  await Promise.all(clients.map(async (client) => {
    while (left > 0) {
      left--;
      await send(client);
    }
  }));
}

/** One visit: a new TLS connection (resuming `session` when given), one
 *  GET with `Connection: close`, read to the end and checked, the
 *  connection closed. Its socket's handshake facts and the newest session
 *  the server gave. */
async function visit(port, ca, session, page, encoding, sha) {
  const c = connection(port, { ca, session });
  let given = null;
  c.socket.on("session", (s) => (given = s));
  const closed = new Promise((resolve) => c.socket.once("close", resolve));
  checkAnswer(await c.request(requestBytes(page, encoding, true)), page, encoding, sha);
  const facts = handshakeFacts(c.socket);
  await closed;
  return { facts, session: given };
}

/** What was negotiated: version, cipher, key exchange, protocol, and
 *  whether the session was resumed. */
function handshakeFacts(socket) {
  return {
    protocol: socket.getProtocol(),
    cipher: socket.getCipher().standardName,
    group: socket.getEphemeralKeyInfo()?.name ?? null,
    alpn: socket.alpnProtocol,
    resumed: socket.isSessionReused(),
  };
}

/** Row 11 on one server already started under callgrind (its process
 *  `pid`, dumping to `out`), serving HTTPS on `port`: instructions per
 *  request over keep-alive HTTP/1.1 and HTTP/2, per new connection with a
 *  full handshake, and per new connection resuming a session, each with
 *  one GET of TLS_PAGE in TLS_ENCODING checked against `sha`. Also what
 *  the handshakes negotiated (both servers must agree). */
export async function countTls(pid, port, out, ca, sha) {
  const [page, encoding] = [TLS_PAGE, TLS_ENCODING];
  const figures = {};
  const h1 = Array.from({ length: CONNECTIONS }, () => connection(port, { ca }));
  const h1Get = (c) => c.request(requestBytes(page, encoding)).then((res) => checkAnswer(res, page, encoding, sha));
  await spread(500, h1, h1Get);
  const negotiated = handshakeFacts(h1[0].socket);
  figures.keepAliveH1 = await windows(pid, out, TLS_REQUESTS, () => spread(TLS_REQUESTS, h1, h1Get));
  h1.forEach((c) => c.close());

  const h2 = await Promise.all(Array.from({ length: CONNECTIONS }, () => h2Session(port, ca)));
  const h2Check = (s) => h2Get(s, page, encoding).then((res) => checkAnswer(res, page, encoding, sha));
  await spread(500, h2, h2Check);
  if (h2[0].alpnProtocol !== "h2") throw new Error(`HTTP/2 was not negotiated (${h2[0].alpnProtocol})`);
  figures.keepAliveH2 = await windows(pid, out, TLS_REQUESTS, () => spread(TLS_REQUESTS, h2, h2Check));
  await Promise.all(h2.map((s) => new Promise((resolve) => s.close(resolve))));

  const clients = Array.from({ length: HANDSHAKE_CLIENTS }, (_, i) => i);
  const full = async () => {
    const { facts } = await visit(port, ca, undefined, page, encoding, sha);
    if (facts.resumed) throw new Error("a handshake without a session was resumed");
  };
  await spread(20, clients, full);
  figures.fullHandshake = await windows(pid, out, HANDSHAKES, () => spread(HANDSHAKES, clients, full));

  // Each client resumes the newest session it was given (a ticket used
  // once, as a browser does).
  const sessions = [];
  for (const i of clients) sessions[i] = (await visit(port, ca, undefined, page, encoding, sha)).session;
  if (sessions.some((s) => !s)) throw new Error("the server gave no session to resume");
  const resumed = async (i) => {
    const { facts, session } = await visit(port, ca, sessions[i], page, encoding, sha);
    if (!facts.resumed) throw new Error(`a session was not resumed (${facts.protocol})`);
    if (session) sessions[i] = session;
  };
  await spread(20, clients, resumed);
  figures.resumedHandshake = await windows(pid, out, HANDSHAKES, () => spread(HANDSHAKES, clients, resumed));
  return { figures, negotiated };
}

/** Row 12: h2load on `urls` (one server) at `connections`, HTTP/2 with
 *  `streams` at once on each, or HTTP/1.1 over TLS (`h1`); req/s and
 *  every request that did not succeed with a 2xx. */
export function h2load(urls, { connections = 64, streams = 10, h1 = false, duration = "10s", warmup = "2s", headers = {} } = {}) {
  const args = ["-t2", `-c${connections}`, `-D${duration.replace(/s$/, "")}`, `--warm-up-time=${warmup.replace(/s$/, "")}`];
  args.push(...(h1 ? ["--h1"] : [`-m${streams}`]));
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const out = execFileSync("h2load", [...args, ...urls], { encoding: "utf8", maxBuffer: 1 << 24 });
  const rps = Number(out.match(/finished in [\d.]+\w+, ([\d.]+) req\/s/)?.[1]);
  const done = out.match(/requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/);
  // Its status counts include the warm-up's answers, its request counts
  // do not: a failure is one that failed, errored or timed out, or an
  // answer other than 2xx.
  const codes = out.match(/status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/);
  if (!done || !rps || !codes) throw new Error(`h2load printed no figures:\n${out}`);
  const failed = Number(done[5]) + Number(done[6]) + Number(done[7]) + Number(codes[2]) + Number(codes[3]) + Number(codes[4]);
  const protocol = out.match(/Application protocol: (\S+)/)?.[1];
  if (protocol !== (h1 ? "http/1.1" : "h2")) throw new Error(`h2load spoke ${protocol}, not ${h1 ? "http/1.1" : "h2"}`);
  return { rps, requests: Number(done[1]), failed };
}

/** Resident memory of `pids` (a server's processes), in KB: now and at
 *  its peak. */
function memoryKb(pids) {
  const read = (pid, field) => Number(fs.readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`))[1]);
  return { rss: pids.reduce((n, p) => n + read(p, "VmRSS"), 0), peak: pids.reduce((n, p) => n + read(p, "VmHWM"), 0) };
}

/** The processes of nginx started as `master`: itself and its workers. */
export function nginxPids(master) {
  const children = fs.readFileSync(`/proc/${master}/task/${master}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  return [master, ...children];
}

/** Row 14 on one server (its processes `pids()`, HTTPS on `port`): its
 *  resident memory before, then with `count` connections open and idle,
 *  each after a handshake and one GET of one of `pages` over HTTP/1.1.
 *  The connections are made by CLIENTS processes of bench/idle-tls.mjs,
 *  each with room for its share, at once: ours closes a keep-alive
 *  connection that sends nothing for 10 s, so each client repeats the GET
 *  of a connection silent for 5 s until all are open. Fails if the server
 *  closed any before the reading. */
export async function idleMemory(pids, port, ca, pages, count) {
  const before = memoryKb(pids());
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), "idle-tls.mjs");
  const clients = Array.from({ length: IDLE_CLIENTS }, (_, i) => {
    const share = Math.floor(count / IDLE_CLIENTS) + (i < count % IDLE_CLIENTS ? 1 : 0);
    const child = spawn("sh", ["-c", `ulimit -n ${share + 1024} && exec "$0" "$@"`, process.execPath, script, String(port), String(share), pages.join(",")], {
      env: { ...process.env, BENCH_CA: ca.toString() },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const said = [];
    let buffered = "";
    child.stdout.on("data", (d) => {
      buffered += d;
      const lines = buffered.split("\n");
      buffered = lines.pop();
      said.push(...lines);
    });
    const line = async (prefix) => {
      for (;;) {
        const hit = said.find((l) => l.startsWith(prefix));
        if (hit) return hit;
        if (child.exitCode !== null) throw new Error(`bench/idle-tls.mjs exited (${child.exitCode}) before "${prefix}"`);
        await sleep(20);
      }
    };
    return { child, line };
  });
  const started = Date.now();
  await Promise.all(clients.map((c) => c.line("open ")));
  const openMs = Date.now() - started;
  // Let the server settle (its allocator and the connections' tasks).
  await sleep(500);
  const during = memoryKb(pids());
  let stillOpen = 0;
  for (const c of clients) {
    c.child.stdin.write("check\n");
    stillOpen += Number((await c.line("still open ")).split(" ")[2]);
    c.child.stdin.end();
  }
  await Promise.all(clients.map((c) => new Promise((resolve) => (c.child.exitCode !== null ? resolve() : c.child.on("exit", resolve)))));
  if (stillOpen !== count) throw new Error(`${count - stillOpen} of ${count} idle connections were closed before the reading (all were open ${openMs} ms after the first began)`);
  return { connections: count, openMs, beforeKb: before.rss, rssKb: during.rss, peakKb: during.peak, perConnectionKb: (during.rss - before.rss) / count };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  need("valgrind", "valgrind");
  const dir = tempDir("citizen-callgrind-tls-");
  const bin = siteBinary("release");
  // The bytes every answer is checked against, from a plain server of the
  // same binary (the pages do not depend on the scheme they are served on).
  const plainPort = await freePort();
  const plain = startSite(bin, plainPort, { SITE_URL, ...COUNTED_ENV });
  await waitFor(`http://127.0.0.1:${plainPort}/readyz`);
  const sha = (await bodies(plainPort, [TLS_PAGE]))[TLS_PAGE][TLS_ENCODING];
  plain.kill("SIGKILL");
  const certs = certificate(dir);
  const port = await freePort();
  const out = path.join(dir, "ours-tls.out");
  const ours = await startOursTls(bin, certs, port, await freePort(), { wrap: valgrind(out), readyMs: 600_000, env: COUNTED_ENV });
  const { figures, negotiated } = await countTls(ours.pid, port, out, certs.ca, sha);
  ours.kill("SIGKILL");
  const recorded = JSON.parse(fs.readFileSync(path.join(root, "bench/results.json"), "utf8")).rows.tlsInstructions?.kinds ?? [];
  console.log(`${negotiated.protocol}, ${negotiated.cipher}, ${negotiated.group}; ${TLS_PAGE} in ${TLS_ENCODING}`);
  for (const [kind, figure] of Object.entries(figures)) {
    const then = recorded.find((k) => k.kind === kind)?.ours;
    const against = then ? `; recorded run ${then.map(Math.round).join(" / ")}, ${fmtChange(figure.instructions, then)}` : "";
    console.log(`${kind}: ${Math.round(figure.instructions)} instructions (windows: ${figure.windows.map(Math.round).join(", ")})${against}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
