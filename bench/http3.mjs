// HTTP/3's rows of the bench (17 to 20), against HTTP/2 over TCP for the
// round trips and against Caddy (Debian's caddy 2.6, HTTP/3 by default)
// for the cached hit, with the same certificate (the ECDSA P-256 leaf of
// bench/tls.mjs) and the same page bytes:
//
//  17. round trips before the first byte of `/`, counted from a packet
//      capture (tcpdump, in a network namespace made here): a new visitor
//      and a returning one (a resumed session), HTTP/3 against HTTP/2.
//  18. instructions per cached hit over HTTP/3 (callgrind, as row 1), ours
//      and Caddy's (GOMAXPROCS=1, and GODEBUG=asyncpreemptoff=1: callgrind
//      asserts on Go's preemption signal).
//  19. requests per second over HTTP/3 at 64 connections, the bench's own
//      client (bench/h3-load/) for both.
//  20. instructions of a new QUIC connection with one request, against a
//      new TCP connection with TLS 1.3 and one request (ours, both).
//
//   node bench/http3.mjs
//
// records the rows in bench/results.json (`rows.http3`) and rewrites the
// guides' tables (bench/report.mjs). Needs root (a network namespace),
// valgrind, tcpdump, caddy and iproute2.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { cargoEnv, freePort, need, root, siteBinary, sleep, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { COUNTED_ENV, SITE_URL, valgrind, windows } from "./instructions.mjs";
import { median, recordRow } from "./report.mjs";
import { mirror } from "./run.mjs";
import { certificate, countTls, startOursTls, TLS_ENCODING, TLS_PAGE } from "./tls.mjs";

/** Row 18's windows: requests over CONNECTIONS open connections. */
const REQUESTS = Number(process.env.BENCH_CALLGRIND_H3_REQUESTS ?? 2000);
const CONNECTIONS = 8;
/** Row 20's windows: new connections, one request each, 4 at a time. */
const HANDSHAKES = Number(process.env.BENCH_CALLGRIND_HANDSHAKES ?? 200);
/** Row 19. */
const RATE_CONNECTIONS = 64;
const RATE_SECONDS = Number(process.env.BENCH_H3_SECONDS ?? 10);

/** The bench's HTTP/3 client (bench/h3-load/), release build. */
function h3Load() {
  execFileSync("cargo", ["build", "--release", "--quiet", "-p", "h3-load"], { cwd: root, env: cargoEnv(), stdio: "inherit" });
  return path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "release", "h3-load");
}

/** A child that prints `ready`, then `done` for each line it is sent. */
function driven(cmd, args, env = process.env) {
  const child = spawn(cmd, args, { env, stdio: ["pipe", "pipe", "inherit"] });
  let buffered = "";
  const waiting = [];
  child.stdout.on("data", (d) => {
    buffered += d;
    const lines = buffered.split("\n");
    buffered = lines.pop();
    for (const line of lines) waiting.shift()?.(line);
  });
  const next = () =>
    new Promise((resolve, reject) => {
      waiting.push(resolve);
      child.once("exit", (code) => reject(new Error(`${path.basename(cmd)} ${args[0]} exited (${code})`)));
    });
  return {
    ready: next(),
    async round() {
      const done = next();
      child.stdin.write("go\n");
      if ((await done) !== "done") throw new Error("the client did not finish its round");
    },
    stop: () => child.stdin.end(),
  };
}

const target = (port, certs) => ["--connect", `127.0.0.1:${port}`, "--name", "localhost", "--ca", certs.caFile];

/** Caddy serving `www` (the pages as ours serves them, in each encoding)
 *  over HTTPS and HTTP/3 on `port`, with the headers ours sends for `/`;
 *  `wrap` runs it under callgrind. */
function startCaddy(dir, www, headers, certs, port, { wrap = [], env = {} } = {}) {
  const own = new Set(["date", "content-length", "content-encoding", "etag", "x-request-id", "content-type", "connection", "keep-alive", "alt-svc", "vary"]);
  const lines = Object.entries(headers)
    .filter(([h]) => !own.has(h))
    .map(([h, v]) => `\t\t${h} "${v.replace(/["\\]/g, "\\$&")}"`);
  const file = path.join(dir, "Caddyfile");
  fs.writeFileSync(file, `{
	admin off
	auto_https disable_redirects
	skip_install_trust
	servers {
		protocols h1 h2 h3
	}
}
https://localhost:${port} {
	bind 127.0.0.1
	tls ${certs.cert} ${certs.key}
	root * ${www}
	rewrite / /index.html
	header {
		-Server
${lines.join("\n")}
	}
	file_server {
		precompressed br gzip
	}
}
`);
  const [cmd, ...argv] = [...wrap, "caddy", "run", "--config", file, "--adapter", "caddyfile"];
  return spawn(cmd, argv, { env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env }, stdio: ["ignore", "ignore", "ignore"] });
}

/** Resolves once HTTP/3 on `port` answers `/` with a 200. */
async function readyH3(client, port, certs, ms = 600_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      execFileSync(client, ["get", ...target(port, certs), "/"], { stdio: "ignore", timeout: 60_000 });
      return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`HTTP/3 on ${port} did not answer in ${ms / 1000} s`);
    await sleep(500);
  }
}

/** Row 18 on a server under callgrind (`pid`, dumping to `out`). */
async function hitInstructions(client, port, certs, pid, out) {
  const c = driven(client, ["count", ...target(port, certs), "--connections", String(CONNECTIONS), "--requests", String(REQUESTS), "--warmup", "500", "--path", TLS_PAGE, "--encoding", TLS_ENCODING]);
  if ((await c.ready) !== "ready") throw new Error("h3-load count is not ready");
  const figure = await windows(pid, out, REQUESTS, () => c.round());
  c.stop();
  return figure;
}

/** Row 20's HTTP/3 side on a server under callgrind. */
async function newConnectionInstructions(client, port, certs, pid, out) {
  const c = driven(client, ["new", ...target(port, certs), "--count", String(HANDSHAKES), "--clients", "4", "--path", TLS_PAGE, "--encoding", TLS_ENCODING]);
  if ((await c.ready) !== "ready") throw new Error("h3-load new is not ready");
  const figure = await windows(pid, out, HANDSHAKES, () => c.round());
  c.stop();
  return figure;
}

/** Row 19: requests per second with the bench's client. */
function rate(client, port, certs) {
  const out = execFileSync(client, ["rate", ...target(port, certs), "--connections", String(RATE_CONNECTIONS), "--seconds", String(RATE_SECONDS), "--path", TLS_PAGE], { encoding: "utf8" });
  return JSON.parse(out);
}

/** Row 17: our server in a network namespace of its own,
 *  two visits over HTTP/2 then two over HTTP/3 (a new visitor, then the
 *  same one resuming), their packets captured; the round trips before
 *  the first byte of each visit's answer. */
async function firstByteRoundTrips(bin, client, certs, dir) {
  const ns = `citizen-bench-${process.pid}`;
  const inNs = (cmd, args, opts) => execFileSync("ip", ["netns", "exec", ns, cmd, ...args], opts);
  execFileSync("ip", ["netns", "add", ns]);
  try {
    execFileSync("ip", ["-n", ns, "link", "set", "lo", "up"]);
    const port = 8443;
    const env = { ...process.env, ...COUNTED_ENV, TLS_CERT: certs.cert, TLS_KEY: certs.key, HTTPS_ADDR: `127.0.0.1:${port}`, HTTP_ADDR: "127.0.0.1:8080", SITE_URL, DATABASE_URL: `sqlite://${dir}/rtt.db`, MAX_CONNECTIONS_PER_CLIENT: "0" };
    const server = spawn("ip", ["netns", "exec", ns, bin, "serve"], { env, stdio: ["ignore", "ignore", "ignore"] });
    try {
      const deadline = Date.now() + 600_000;
      for (;;) {
        try {
          inNs(client, ["get", ...target(port, certs), "/readyz"], { stdio: "ignore", timeout: 60_000 });
          break;
        } catch {}
        if (Date.now() > deadline) throw new Error("the server in the namespace was not ready");
        await sleep(500);
      }
      const capture = path.join(dir, "first-byte.pcap");
      const tcpdump = spawn("ip", ["netns", "exec", ns, "tcpdump", "-i", "lo", "-U", "-n", "-w", capture, `port ${port}`], { stdio: ["ignore", "ignore", "pipe"] });
      await new Promise((resolve) => tcpdump.stderr.once("data", resolve));
      const said = {};
      for (const protocol of ["h2", "h3"]) {
        said[protocol] = JSON.parse(inNs(client, ["visits", "--protocol", protocol, ...target(port, certs), "--visits", "2", "--path", "/"], { encoding: "utf8" }));
        await sleep(300);
      }
      await sleep(500);
      tcpdump.kill("SIGINT");
      await new Promise((resolve) => tcpdump.on("exit", resolve));
      const text = execFileSync("tcpdump", ["-r", capture, "-tt", "-n", "-x"], { encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "ignore"] });
      const visits = countFlights(text, port);
      const of = (transport) => visits.filter((v) => v.transport === transport);
      const [tcp, udp] = [of("tcp"), of("udp")];
      if (tcp.length !== 2 || udp.length !== 2) throw new Error(`the capture holds ${tcp.length} TCP and ${udp.length} UDP visits, not 2 each: ${JSON.stringify(visits)}\n${text.split("\n").slice(0, 80).join("\n")}`);
      // The second visit of each resumes: rustls says so over HTTP/2, and
      // a resumed handshake sends no certificate (fewer bytes before the
      // request). Over HTTP/3 the server's first datagram is padded to
      // 1,200 bytes either way, and quinn does not say: the client says it
      // offered its ticket.
      if (!said.h2.resumed[1] || said.h2.resumed[0]) throw new Error(`HTTP/2: the second visit was not the one resumed (${said.h2.resumed})`);
      if (!(tcp[1].serverBytesBefore < tcp[0].serverBytesBefore - 300)) throw new Error(`HTTP/2: the server sent ${tcp.map((v) => v.serverBytesBefore)} bytes before the request`);
      if (!said.h3.resumed[1] || said.h3.resumed[0]) throw new Error(`HTTP/3: the second visit did not offer the first's ticket (${said.h3.resumed})`);
      return {
        h2: { new: tcp[0].roundTrips, resumed: tcp[1].roundTrips },
        h3: { new: udp[0].roundTrips, resumed: udp[1].roundTrips },
        flights: visits,
      };
    } finally {
      server.kill("SIGKILL");
    }
  } finally {
    execFileSync("ip", ["netns", "del", ns]);
  }
}

/** A QUIC datagram's packets, by type (`initial`, `0rtt`, `handshake`,
 *  `retry`, `1rtt`): long headers name their type and length in the
 *  clear; a short header (1-RTT) runs to the datagram's end. The lengths
 *  of its Handshake packets are added to `handshakeBytes.n` when given. */
export function quicPackets(d, handshakeBytes = { n: 0 }) {
  const types = [];
  const varint = (at) => {
    const n = 1 << (d[at] >> 6);
    let v = d[at] & 0x3f;
    for (let k = 1; k < n; k++) v = v * 256 + d[at + k];
    return { n, v };
  };
  for (let i = 0; i < d.length; ) {
    if (!(d[i] & 0x80)) {
      types.push("1rtt");
      break;
    }
    const type = ["initial", "0rtt", "handshake", "retry"][(d[i] >> 4) & 3];
    types.push(type);
    if (type === "retry") break;
    let j = i + 6 + d[i + 5];
    j += 1 + d[j];
    if (type === "initial") {
      const token = varint(j);
      j += token.n + token.v;
    }
    const length = varint(j);
    if (type === "handshake") handshakeBytes.n += length.v;
    i = j + length.n + length.v;
  }
  return types;
}

/** Each visit of a capture (`tcpdump -tt -n -x` text), by client port:
 *  the round trips before the first byte of its answer, counted from the
 *  wire as the client's flights up to the one that carries its request.
 *  TCP: the SYN, then each payload the client sends after the server sent
 *  one (its ClientHello, a second one after a HelloRetryRequest, its
 *  Finished with the request), up to the server's run of payload that
 *  carries the page (its largest). QUIC: the Initial, another after a
 *  Retry, then the Handshake and 1-RTT packets that carry the client's
 *  Finished and its request (which need the same flight of the server's).
 *  No timing is read, so the count does not move with load. Also the
 *  bytes the server sent before the request (its certificate among them
 *  unless the session was resumed). */
export function countFlights(text, serverPort) {
  const byClient = new Map();
  let last = null;
  for (const line of text.split("\n")) {
    const m = line.match(/^(\d+\.\d+) IP6? (\S+)\.(\d+) > (\S+)\.(\d+): (.*)$/);
    if (m) {
      last = null;
      const [, time, , fromPort, , toPort, rest] = m;
      const toServer = Number(toPort) === serverPort;
      if (!toServer && Number(fromPort) !== serverPort) continue;
      const clientPort = toServer ? Number(fromPort) : Number(toPort);
      const udp = /UDP, length (\d+)/.exec(rest);
      const key = `${udp ? "udp" : "tcp"}:${clientPort}`;
      if (!byClient.has(key)) byClient.set(key, { transport: udp ? "udp" : "tcp", packets: [] });
      last = { t: Number(time), toServer, syn: /Flags \[S/.test(rest), bytes: Number((udp ?? /length (\d+)/.exec(rest))?.[1] ?? 0), hex: "" };
      byClient.get(key).packets.push(last);
      continue;
    }
    const hex = line.match(/^\s+0x[0-9a-f]+:\s+(.*)$/);
    if (hex && last) last.hex += hex[1].replace(/\s+/g, "");
  }
  const visits = [];
  for (const [, v] of byClient) {
    // Not a visit: late answers to a readiness check given up on.
    if (!v.packets.some((p) => p.toServer)) continue;
    const flights = v.transport === "tcp" ? tcpFlights(v.packets) : quicFlights(v.packets);
    visits.push({ transport: v.transport, start: v.packets[0].t, ...flights });
  }
  return visits.sort((a, b) => a.start - b.start);
}

function tcpFlights(packets) {
  const withPayload = packets.filter((p) => p.syn || p.bytes > 0);
  // The server's runs of payload between the client's, and the largest.
  const runs = [];
  for (const p of withPayload) {
    if (p.toServer) continue;
    const before = withPayload.filter((q) => q.toServer && q.t <= p.t).length;
    if (runs.at(-1)?.before !== before) runs.push({ before, start: p.t, bytes: 0 });
    runs.at(-1).bytes += p.bytes;
  }
  const answer = runs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  let flights = 0;
  let heard = true;
  // The server's payload before the request: its certificate among it
  // unless the session was resumed.
  let sentBefore = 0;
  for (const p of withPayload) {
    if (p.t >= answer.start) break;
    if (!p.toServer) {
      heard = true;
      sentBefore += p.bytes;
    } else if (heard) {
      flights++;
      heard = false;
    }
  }
  return { roundTrips: flights, serverBytesBefore: sentBefore };
}

function quicFlights(packets) {
  let flights = 0;
  let retried = false;
  // The server's Handshake packets (its certificate among them unless the
  // session was resumed; its datagrams are padded, its packets are not).
  const sent = { n: 0 };
  const seen = new Set();
  for (const p of packets) {
    // IPv4 (its header's length in its first byte) and UDP's 8 bytes.
    const ip = Buffer.from(p.hex, "hex");
    const datagram = ip.subarray((ip[0] & 0x0f) * 4 + 8);
    if (!p.toServer) {
      if (quicPackets(datagram, sent).includes("retry")) retried = true;
      continue;
    }
    const types = quicPackets(datagram);
    if (types.includes("initial") && (!seen.has("initial") || retried)) {
      flights++;
      retried = false;
    }
    if ((types.includes("handshake") || types.includes("1rtt")) && !seen.has("handshake") && !seen.has("1rtt")) flights++;
    for (const t of types) seen.add(t);
    if (seen.has("1rtt")) break;
  }
  return { roundTrips: flights, serverBytesBefore: sent.n };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [tool, pkg] of [["valgrind", "valgrind"], ["tcpdump", "tcpdump"], ["caddy", "caddy"], ["ip", "iproute2"], ["openssl", "openssl"]]) need(tool, pkg);
  const dir = tempDir("citizen-bench-h3-");
  const bin = siteBinary("release");
  const client = h3Load();
  const certs = certificate(dir);
  const caddyVersion = execFileSync("caddy", ["version"], { encoding: "utf8" }).trim().split(" ")[0];
  // The page bytes Caddy serves: ours, from a plain server of the same binary.
  const plainPort = await freePort();
  const plain = startSite(bin, plainPort, { SITE_URL, ...COUNTED_ENV });
  await waitFor(`http://127.0.0.1:${plainPort}/readyz`);
  const { www, pageHeaders } = await mirror(plainPort);
  plain.kill("SIGKILL");

  console.log("row 17: round trips before the first byte (packet capture)...");
  const rtt = await firstByteRoundTrips(bin, client, certs, dir);
  console.log(`  HTTP/2: new ${rtt.h2.new}, resumed ${rtt.h2.resumed}; HTTP/3: new ${rtt.h3.new}, resumed ${rtt.h3.resumed}`);

  console.log("rows 18 and 20: ours under callgrind...");
  const oursOut = path.join(dir, "ours-h3.out");
  const oursPort = await freePort();
  const ours = await startOursTls(bin, certs, oursPort, await freePort(), { wrap: valgrind(oursOut), readyMs: 600_000, env: COUNTED_ENV });
  await readyH3(client, oursPort, certs);
  const oursHit = await hitInstructions(client, oursPort, certs, ours.pid, oursOut);
  const oursNewQuic = await newConnectionInstructions(client, oursPort, certs, ours.pid, oursOut);
  const sha = execFileSync("sh", ["-c", `sha256sum ${path.join(www, "index.html.br")}`], { encoding: "utf8" }).split(" ")[0];
  const { figures: tcp } = await countTls(ours.pid, oursPort, oursOut, certs.ca, sha);
  ours.kill("SIGKILL");

  // Go's preemption signal (SIGURG) trips an assertion of callgrind's
  // signal handling (valgrind 3.19): preemption by signal is turned off.
  console.log("row 18: Caddy under callgrind (GOMAXPROCS=1, GODEBUG=asyncpreemptoff=1)...");
  const caddyOut = path.join(dir, "caddy-h3.out");
  const caddyPort = await freePort();
  const caddy = startCaddy(dir, www, pageHeaders["/"], certs, caddyPort, { wrap: valgrind(caddyOut), env: { GOMAXPROCS: "1", GODEBUG: "asyncpreemptoff=1" } });
  await readyH3(client, caddyPort, certs);
  const caddyHit = await hitInstructions(client, caddyPort, certs, caddy.pid, caddyOut);
  caddy.kill("SIGKILL");

  console.log("row 19: requests per second at 64 connections...");
  const ratePort = await freePort();
  const oursLive = await startOursTls(bin, certs, ratePort, await freePort());
  await readyH3(client, ratePort, certs, 60_000);
  rate(client, ratePort, certs);
  const oursRate = rate(client, ratePort, certs);
  oursLive.kill("SIGKILL");
  const caddyRatePort = await freePort();
  const caddyLive = startCaddy(fs.mkdtempSync(path.join(dir, "live-")), www, pageHeaders["/"], certs, caddyRatePort);
  await readyH3(client, caddyRatePort, certs, 60_000);
  rate(client, caddyRatePort, certs);
  const caddyRate = rate(client, caddyRatePort, certs);
  caddyLive.kill("SIGKILL");

  const row = {
    date: new Date().toISOString().slice(0, 10),
    caddy: caddyVersion,
    page: TLS_PAGE,
    encoding: TLS_ENCODING,
    roundTrips: { h2: rtt.h2, h3: rtt.h3, flights: rtt.flights },
    hit: { ours: oursHit.windows, caddy: caddyHit.windows, requests: REQUESTS, connections: CONNECTIONS },
    rate: { connections: RATE_CONNECTIONS, seconds: RATE_SECONDS, ours: oursRate, caddy: caddyRate },
    newConnection: { quic: oursNewQuic.windows, tcp: tcp.fullHandshake.windows, handshakes: HANDSHAKES },
  };
  console.log(`row 18: ${Math.round(median(row.hit.ours))} instructions per hit, Caddy ${Math.round(median(row.hit.caddy))}`);
  console.log(`row 19: ${Math.round(oursRate.per_second)} req/s, Caddy ${Math.round(caddyRate.per_second)}`);
  console.log(`row 20: a new QUIC connection ${Math.round(median(row.newConnection.quic))} instructions, TCP + TLS 1.3 ${Math.round(median(row.newConnection.tcp))}`);
  recordRow("http3", row);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(www, { recursive: true, force: true });
}
