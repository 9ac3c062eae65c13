// A steady load over TLS that notices every request a swap of the server
// process would lose: keep-alive HTTP/1.1 clients, HTTP/2 clients with
// several streams each, a new connection per request, and contact-form
// posts. Used by tests/swaps.rs, tests/live_systemd.rs (through
// tests/ops/live-systemd.sh) and bench/run.mjs ("requests failed during
// 5 upgrades under load").
//
// A failure is anything a visitor would see: a connection refused or
// reset, an error, a status other than the page's, a body cut short or not
// byte-identical to one of the page's known versions, an acknowledged
// intro request that is not stored once. Retried, as browsers do
// (RFC 9112 9.3.1, RFC 9113 8.7), and counted apart: a GET on a reused
// keep-alive connection the server closed before answering, and an HTTP/2
// stream the server's GOAWAY said it never processed.
//
//   node bench/swap-load.mjs snapshot --url https://localhost:8443 --ca ca.pem
//     prints {path: sha256 of the body} for every page of the sitemap and a 404
//   node bench/swap-load.mjs load --url ... --ca ... --expect a.json,b.json
//     runs until "stop" on standard input; "swap" and "settled" lines mark
//     a swap's window; prints the report (JSON) on standard output.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import readline from 'node:readline';

const sha = (buf) => createHash('sha256').update(buf).digest('hex');
const now = () => performance.now();

/** One request over `agent` (an https.Agent, or false for a new connection). */
function h1(target, path, { agent, method = 'GET', body, headers = {}, onSocket }) {
  return new Promise((resolve) => {
    const started = now();
    let answered = false;
    const req = https.request(
      {
        host: target.host,
        port: target.port,
        servername: target.servername,
        ca: target.ca,
        path,
        method,
        agent,
        headers: { host: target.authority, ...headers },
      },
      (res) => {
        answered = true;
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', (e) => resolve({ error: `body: ${e.code || e.message}`, answered, started }));
        res.on('aborted', () => resolve({ error: 'body cut short', answered, started }));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const declared = res.headers['content-length'];
          if (!res.complete || (declared !== undefined && Number(declared) !== body.length)) {
            return resolve({ error: `body cut short: ${body.length} of ${declared}`, answered, started });
          }
          resolve({ status: res.statusCode, body, started, reused: req.reusedSocket });
        });
      },
    );
    req.on('socket', (s) => onSocket?.(s));
    req.on('error', (e) => resolve({ error: e.code || e.message, answered, reused: req.reusedSocket, started }));
    req.setTimeout(30000, () => req.destroy(new Error('timed out after 30 s')));
    req.end(body);
  });
}

/** Where to connect (`connect`, else the URL's host) and what to ask for
 *  (the URL's name, for SNI and :authority / Host), trusting `ca`. */
function targetOf(options) {
  const url = new URL(options.url);
  return {
    host: options.connect?.split(':')[0] || url.hostname,
    port: Number(options.connect?.split(':')[1] || url.port || 443),
    servername: url.hostname,
    authority: url.host,
    ca: options.ca ? fs.readFileSync(options.ca) : undefined,
  };
}

export function startLoad(options) {
  const target = targetOf(options);
  const expect = options.expect || {};
  const paths = Object.keys(expect).length ? Object.keys(expect) : ['/', '/about', '/blog', '/pricing'];
  const report = {
    requests: 0,
    failed: 0,
    failures: [],
    byClient: {},
    retried: { keepAliveClosed: 0, http2Refused: 0 },
    intros: [],
    serials: new Set(),
    latencies: [],
  };
  const windows = [];
  let stopping = false;
  const serial = (socket) => {
    const note = () => {
      const cert = socket.getPeerCertificate?.();
      if (cert?.serialNumber) report.serials.add(cert.serialNumber);
    };
    if (socket.encrypted && socket.getPeerCertificate?.()?.serialNumber) note();
    else socket.once('secureConnect', note);
  };
  const fail = (client, path, why) => {
    report.failed += 1;
    if (report.failures.length < 30) report.failures.push(`${client} ${path}: ${why}`);
  };
  const judge = (client, path, result) => {
    report.requests += 1;
    report.byClient[client] = (report.byClient[client] || 0) + 1;
    report.latencies.push([result.started, now() - result.started]);
    if (result.error) return fail(client, path, result.error);
    const want = path === '/no-such-page' ? 404 : 200;
    if (result.status !== want) return fail(client, path, `status ${result.status}`);
    const known = expect[path];
    if (known && !known.includes(sha(result.body))) {
      fail(client, path, `a body of ${result.body.length} bytes that is none of the page's versions`);
    }
  };
  let turn = 0;
  const nextPath = () => paths[turn++ % paths.length];
  const loops = [];

  // Keep-alive HTTP/1.1: one connection each, reused.
  for (let i = 0; i < (options.keepAlive ?? 3); i++) {
    loops.push((async () => {
      let agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      while (!stopping) {
        const path = nextPath();
        let result = await h1(target, path, { agent, onSocket: serial });
        if (result.error && result.reused && !result.answered) {
          // Closed between requests by a draining server: a new connection.
          report.retried.keepAliveClosed += 1;
          agent.destroy();
          agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
          result = await h1(target, path, { agent, onSocket: serial });
        }
        judge('http1-keepalive', path, result);
      }
      agent.destroy();
    })());
  }

  // HTTP/2: sessions with several streams at once.
  for (let i = 0; i < (options.http2 ?? 2); i++) {
    loops.push((async () => {
      let session = null;
      const open = () => {
        const s = http2.connect(`https://${target.host}:${target.port}`, {
          ca: target.ca,
          servername: target.servername,
        });
        s.on('error', () => {});
        s.on('goaway', () => { if (session === s) session = null; });
        s.on('close', () => { if (session === s) session = null; });
        s.once('connect', () => serial(s.socket));
        return s;
      };
      const stream = (path) => new Promise((resolve) => {
        const started = now();
        if (!session || session.closed || session.destroyed) session = open();
        const s = session;
        let answered = false;
        let req;
        try {
          req = s.request({ ':path': path, ':authority': target.authority });
        } catch (e) {
          return resolve({ error: e.code || e.message, refused: true, started, session: s });
        }
        const chunks = [];
        let status;
        let declared;
        req.on('response', (h) => { answered = true; status = h[':status']; declared = h['content-length']; });
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          if (declared !== undefined && Number(declared) !== body.length) {
            return resolve({ error: `body cut short: ${body.length} of ${declared}`, started });
          }
          resolve({ status, body, started });
        });
        req.on('error', (e) => {
          // Never processed (RFC 9113 8.7): refused, or past the GOAWAY's last stream.
          const refused = !answered && (req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM
            || e.code === 'ERR_HTTP2_GOAWAY_SESSION' || e.code === 'ERR_HTTP2_INVALID_SESSION');
          resolve({ error: `${e.code || e.message} (rst ${req.rstCode})`, refused, started, session: s });
        });
        req.on('close', () => {
          if (!answered && req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) {
            resolve({ error: 'refused', refused: true, started, session: s });
          } else if (!answered) {
            resolve({ error: `stream closed unanswered (rst ${req.rstCode})`, started });
          }
        });
        req.setTimeout(30000, () => req.close(http2.constants.NGHTTP2_CANCEL));
        req.end();
      });
      const streams = options.streams ?? 4;
      await Promise.all(Array.from({ length: streams }, async () => {
        while (!stopping) {
          const path = nextPath();
          let result = await stream(path);
          for (let tries = 0; result.refused && tries < 5; tries++) {
            // That connection takes no more streams: the next one opens
            // a new connection (another stream may have opened it already).
            report.retried.http2Refused += 1;
            if (session === result.session) session = null;
            result = await stream(path);
          }
          judge('http2', path, result);
        }
      }));
      session?.close();
    })());
  }

  // A new TLS connection per request: nothing to retry.
  for (let i = 0; i < (options.fresh ?? 2); i++) {
    loops.push((async () => {
      while (!stopping) {
        const path = nextPath();
        judge('new-connection', path, await h1(target, path, {
          agent: false, headers: { connection: 'close' }, onSocket: serial,
        }));
      }
    })());
  }

  // The contact form: each post on a new connection (never retried).
  const run = Math.random().toString(36).slice(2, 8);
  loops.push((async () => {
    let n = 0;
    while (!stopping) {
      const name = `Swap Town ${run}-${n++}`;
      const body = JSON.stringify({
        name, contactPerson: 'Ana', email: 'ana@example.org', website: 'https://example.org',
        description: 'Sent while the server was being swapped', tags: ['Loyalty'],
      });
      const result = await h1(target, '/api/save-to-notion', {
        agent: false,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', connection: 'close' },
        onSocket: serial,
      });
      report.requests += 1;
      report.byClient.intro = (report.byClient.intro || 0) + 1;
      report.latencies.push([result.started, now() - result.started]);
      if (result.error) fail('intro', name, result.error);
      else if (result.status !== 200) fail('intro', name, `status ${result.status}: ${result.body}`);
      else report.intros.push(name);
      await new Promise((r) => setTimeout(r, options.postEveryMs ?? 100));
    }
  })());

  return {
    /** A swap begins ("swap") or is over ("settled"). */
    mark(kind) {
      if (kind === 'swap') windows.push([now(), Infinity]);
      else if (windows.length) windows[windows.length - 1][1] = now();
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
      const inSwap = ([start, took]) => windows.some(([a, b]) => start + took >= a && start <= b);
      const stats = (list) => {
        const sorted = list.map(([, took]) => took).sort((a, b) => a - b);
        const at = (q) => sorted.length ? Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2)) : null;
        return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.length ? Number(sorted[sorted.length - 1].toFixed(2)) : null };
      };
      const { latencies, serials, ...rest } = report;
      return {
        ...rest,
        swaps: windows.length,
        serials: [...serials],
        latencyMs: {
          steady: stats(latencies.filter((l) => !inSwap(l))),
          duringSwaps: stats(latencies.filter(inSwap)),
        },
      };
    },
  };
}

/** {path: sha256} of every page of the sitemap, and of the 404 page. */
export async function snapshot(options) {
  const target = targetOf(options);
  const sitemap = await h1(target, '/sitemap.xml', { agent: false });
  if (sitemap.error || sitemap.status !== 200) throw new Error(`sitemap: ${sitemap.error || sitemap.status}`);
  const paths = [...sitemap.body.toString().matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => new URL(m[1]).pathname);
  const out = {};
  for (const path of [...paths, '/no-such-page']) {
    const r = await h1(target, path, { agent: false });
    if (r.error) throw new Error(`${path}: ${r.error}`);
    out[path] = sha(r.body);
  }
  return out;
}

function args(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) o[argv[i].slice(2)] = argv[i + 1]?.startsWith('--') ? true : argv[++i];
  }
  return o;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, ...rest] = process.argv.slice(2);
  const o = args(rest);
  if (mode === 'snapshot') {
    console.log(JSON.stringify(await snapshot(o)));
  } else if (mode === 'load') {
    const expect = {};
    for (const file of (o.expect || '').split(',').filter(Boolean)) {
      for (const [path, hash] of Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')))) {
        (expect[path] ||= []).includes(hash) || expect[path].push(hash);
      }
    }
    const load = startLoad({
      ...o,
      expect,
      postEveryMs: o['post-every-ms'] ? Number(o['post-every-ms']) : undefined,
    });
    const lines = readline.createInterface({ input: process.stdin });
    for await (const line of lines) {
      if (line === 'stop') break;
      load.mark(line.trim());
    }
    console.log(JSON.stringify(await load.stop()));
    process.exit(0);
  } else {
    console.error('usage: node bench/swap-load.mjs snapshot|load --url URL [--connect HOST:PORT] [--ca FILE] [--expect FILES]');
    process.exit(2);
  }
}
