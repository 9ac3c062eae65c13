// Instructions per cached request, counted by valgrind's callgrind: a figure
// that does not move with the machine's load, so it can hold the claim that a
// cache hit costs what a static file costs, and show what a change to the hit
// path saved (bench/run.mjs, row 1; docs/performance.md).
//
// Each server runs under callgrind in one process with one connection
// worker, alike: ours with CONNECTION_WORKERS=1, nginx with master_process
// off and one worker (under callgrind a process runs one thread at a
// time anyway). For each page
// and encoding: a warm-up, then WINDOWS times the counters are zeroed
// (callgrind_control -z), REQUESTS keep-alive GETs are sent from this
// process over CONNECTIONS connections, each answer checked (status,
// encoding, the very bytes), and the counters dumped (callgrind_control
// -d). A dump's total over the requests is a window's figure; the median
// window is the page's. It counts every thread of the process (tokio's
// workers, timers, the page cache's upkeep), and the instructions in user
// space only: the kernel's side of a read or a write is not in it, for
// either server.
//
//   node bench/instructions.mjs [--profile]
//
// alone measures one run of our server only (the quick loop while cutting),
// each figure beside the recorded run's (bench/results.json) and how far
// from it, in %.
// `--profile` measures `/` on the `profiling` build (the release build with
// its symbols: same code, names to read), prints where the instructions go
// by library and function, and writes bench/profile.json and docs/performance.md's
// table of it.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import tls from "node:tls";
import path from "node:path";
import { freePort, need, root, siteBinary, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { writeReadme } from "./report.mjs";

export const REQUESTS = Number(process.env.BENCH_CALLGRIND_REQUESTS ?? 4000);
export const WARMUP_REQUESTS = Number(process.env.BENCH_CALLGRIND_WARMUP ?? 500);
export const CONNECTIONS = Number(process.env.BENCH_CALLGRIND_CONNECTIONS ?? 8);
/** Counted windows per page and encoding; the figure is their median (one
 *  window in a few catches more of the process's own timers or a slower
 *  path of malloc, and moved a page's figure by up to 1.4 %). */
export const WINDOWS = Number(process.env.BENCH_CALLGRIND_WINDOWS ?? 3);
export const ENCODINGS = ["gzip", "br"];
/** The address every server of a run names in its pages (the default is
 *  its own port, which would make each process's bytes its own). */
export const SITE_URL = "https://citizenwallet.xyz";

/** One keep-alive HTTP/1.1 connection that sends a request and reads its
 *  whole answer (by Content-Length) before the next; over TLS when
 *  `secure` gives the CA to trust, or a secure context made with it
 *  (`context`: one for many connections spares each the reading of the CA;
 *  ALPN http/1.1, and the session to resume when it holds one). */
export function connection(port, secure) {
  const trust = secure?.context ? { secureContext: secure.context } : { ca: secure?.ca };
  const socket = secure
    ? tls.connect({ host: "127.0.0.1", port, servername: "localhost", ...trust, ALPNProtocols: ["http/1.1"], session: secure.session })
    : net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  let buf = Buffer.alloc(0);
  let waiting = null;
  const fail = (e) => {
    if (waiting) waiting.reject(e);
    waiting = null;
  };
  socket.on("error", fail);
  socket.on("close", () => fail(new Error("the server closed the connection")));
  socket.on("data", (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    if (!waiting) return;
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = buf.subarray(0, end).toString("latin1");
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length < end + 4 + length) return;
    const body = buf.subarray(end + 4, end + 4 + length);
    buf = buf.subarray(end + 4 + length);
    const [, status] = head.match(/^HTTP\/1\.1 (\d+)/) ?? [];
    const headers = Object.fromEntries(head.split("\r\n").slice(1).map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    const w = waiting;
    waiting = null;
    w.resolve({ status: Number(status), headers, body });
  });
  return {
    socket,
    request(bytes) {
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        socket.write(bytes);
      });
    },
    close() {
      socket.removeAllListeners("close");
      socket.destroy();
    },
  };
}

export const requestBytes = (page, encoding, close = false) =>
  Buffer.from(`GET ${page} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\nAccept: text/html\r\nAccept-Encoding: ${encoding}\r\n${close ? "Connection: close\r\n" : ""}\r\n`);

/** One GET (over TLS with `secure`), its answer as sent (the body not decoded). */
export async function rawGet(port, page, encoding, secure) {
  const c = connection(port, secure);
  try {
    return await c.request(requestBytes(page, encoding));
  } finally {
    c.close();
  }
}

export const sha256 = (b) => crypto.createHash("sha256").update(b).digest("hex");

/** Throws unless `res` is a 200 in `encoding` whose body has the SHA-256 `sha`. */
export function checkAnswer(res, page, encoding, sha) {
  if (res.status !== 200 || res.headers["content-encoding"] !== encoding) {
    throw new Error(`${page} (${encoding}): ${res.status}, content-encoding ${res.headers["content-encoding"]}`);
  }
  if (sha && sha256(res.body) !== sha) throw new Error(`${page} (${encoding}): not the bytes expected`);
}

/** `count` GETs of `page` in `encoding` over `connections` keep-alive
 *  connections; every answer must be a 200 in that encoding with the body
 *  whose SHA-256 is `sha` (a wrong answer is no saving). */
export async function drive(port, page, encoding, count, connections, sha) {
  const bytes = requestBytes(page, encoding);
  let left = count;
  const one = async () => {
    const c = connection(port);
    try {
      while (left > 0) {
        left--;
        checkAnswer(await c.request(bytes), page, encoding, sha);
      }
    } finally {
      c.close();
    }
  };
  await Promise.all(Array.from({ length: connections }, one));
}

/** callgrind_control's `command` (-z zero, -d dump) on `pid`. */
function control(flag, pid) {
  execFileSync("callgrind_control", [flag, String(pid)], { stdio: "ignore", timeout: 120_000 });
}

/** The total of the newest dump `out.N`. */
function lastDump(out) {
  const dir = path.dirname(out);
  const dumps = fs.readdirSync(dir).filter((f) => f.startsWith(`${path.basename(out)}.`)).map((f) => path.join(dir, f));
  dumps.sort((a, b) => Number(b.split(".").pop()) - Number(a.split(".").pop()));
  const text = fs.readFileSync(dumps[0], "utf8");
  return { file: dumps[0], total: Number(text.match(/^summary: (\d+)/m)[1]) };
}

/** valgrind runs one thread at a time; `--fair-sched=yes` hands the turns
 *  round in a fixed order, so the threads of a multi-threaded server (ours:
 *  tokio's workers) interleave alike from run to run, and so do the paths
 *  the allocator takes (without it, two runs of one page differed by up to
 *  1.3 %, in glibc malloc's slower paths, before ours moved to mimalloc). */
export const valgrind = (out) => ["valgrind", "--tool=callgrind", "--fair-sched=yes", `--callgrind-out-file=${out}`, "--dump-instr=no", "--compress-strings=no"];

/** Instructions per request on a server already started under callgrind
 *  (its process `pid`, dumping to `out`), for each of `pages` in each
 *  encoding, the bytes checked against `expected[page][encoding]` (SHA-256). */
export async function count(pid, port, out, pages, expected) {
  const figures = {};
  for (const page of pages) {
    figures[page] = {};
    for (const encoding of ENCODINGS) {
      const sha = expected[page][encoding];
      await drive(port, page, encoding, WARMUP_REQUESTS, CONNECTIONS, sha);
      figures[page][encoding] = await windows(pid, out, REQUESTS, () => drive(port, page, encoding, REQUESTS, CONNECTIONS, sha));
    }
  }
  return figures;
}

/** WINDOWS times: the counters of the server `pid` (dumping to `out`)
 *  zeroed, `work` (which makes `per` requests) awaited, the counters
 *  dumped. The median window's instructions per request, its dump file,
 *  and every window's figure. */
export async function windows(pid, out, per, work) {
  const all = [];
  for (let w = 0; w < WINDOWS; w++) {
    control("-z", pid);
    await work();
    control("-d", pid);
    const { file, total } = lastDump(out);
    all.push({ instructions: total / per, file });
  }
  all.sort((a, b) => a.instructions - b.instructions);
  return { ...all[Math.floor(all.length / 2)], windows: all.map((w) => w.instructions) };
}

/** The bytes ours sends for each page and encoding, as SHA-256. */
export async function bodies(port, pages) {
  const out = {};
  for (const page of pages) {
    out[page] = {};
    for (const encoding of ENCODINGS) {
      const res = await rawGet(port, page, encoding);
      if (res.status !== 200 || res.headers["content-encoding"] !== encoding) throw new Error(`${page} is not served with ${encoding}`);
      out[page][encoding] = sha256(res.body);
    }
  }
  return out;
}

/** Under callgrind a render takes tens of times as long: the render
 *  deadline (2 s) would cut the prerender short on a slow machine, and a
 *  page whose render failed is made again on a request, or answered 500.
 *  What is counted is the cached hit, never a render. */
export const COUNTED_ENV = { CONNECTION_WORKERS: "1", SSR_DEADLINE_MS: "120000" };

/** Starts the site under callgrind; resolves when it is ready. */
export async function startOursCounted(bin, dir, name) {
  const port = await freePort();
  const out = path.join(dir, `${name}.out`);
  const child = startSite(bin, port, { SITE_URL, ...COUNTED_ENV }, { wrap: valgrind(out), stdio: ["ignore", "ignore", "ignore"] });
  await waitFor(`http://127.0.0.1:${port}/readyz`, 600_000);
  return { child, port, out };
}

/** Each function's own instructions (not those of what it calls) per
 *  request in the callgrind dump `file`, costliest first. Names need a
 *  binary with symbols (the `profiling` build); read from the dump's
 *  format: a `fn=` line names the function its cost lines belong to, and
 *  the cost line after a `calls=` line is the callee's, not its own. */
export function selfCosts(file, requests) {
  const self = new Map();
  let fn = "?";
  let callee = false;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("fn=")) fn = line.slice(3).replace(/^\(\d+\) ?/, "") || fn;
    else if (line.startsWith("calls=")) callee = true;
    else if (/^[\d+*-]/.test(line)) {
      if (callee) callee = false;
      else self.set(fn, (self.get(fn) ?? 0) + Number(line.split(" ")[1] ?? 0));
    }
  }
  return [...self].map(([name, n]) => ({ fn: name, instructions: n / requests })).sort((x, y) => y.instructions - x.instructions);
}

/** The library a function belongs to, from its symbol: the first path
 *  segment (of the type, for `<T as Trait>::f`), mimalloc's C functions
 *  (`mi_` and `_mi_`), or the C library's. */
export function libraryOf(fn) {
  const name = fn.replace(/^[<&]+(mut )?/, "");
  const segment = name.match(/^([A-Za-z_][A-Za-z0-9_]*)::/)?.[1];
  if (segment) return segment === "__rustc" ? "alloc" : segment;
  if (/^(__)?(memcpy|memmove|memset|memcmp|__memcpy|__memmove|__memset)/.test(name)) return "libc: memcpy";
  if (/^_?mi_/.test(name)) return "mimalloc";
  if (/malloc|free|realloc|unlink_chunk|_int_|arena|tcache|memalign/.test(name)) return "libc: malloc";
  return "other";
}

/** Where a hit's instructions go: each library's share of the dump
 *  `file`, with its costliest functions. */
export function byLibrary(file, requests) {
  const groups = new Map();
  for (const { fn, instructions } of selfCosts(file, requests)) {
    const lib = libraryOf(fn);
    const g = groups.get(lib) ?? { library: lib, instructions: 0, functions: [] };
    g.instructions += instructions;
    g.functions.push({ fn, instructions });
    groups.set(lib, g);
  }
  return [...groups.values()]
    .map((g) => ({ ...g, functions: g.functions.slice(0, 4) }))
    .sort((x, y) => y.instructions - x.instructions);
}

/** How far `now` is from the mean of a recorded run's figures, in %. */
export function fmtChange(now, recorded) {
  const mean = recorded.reduce((a, b) => a + b, 0) / recorded.length;
  const change = ((now - mean) / mean) * 100;
  return `${change >= 0 ? "+" : ""}${change.toFixed(2)} %`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  need("valgrind", "valgrind");
  const profiling = process.argv.includes("--profile");
  const pages = profiling ? ["/"] : (process.env.BENCH_PAGES ?? "/,/about,/blog,/blog/brussels-pay-launch,/pricing").split(",");
  const dir = tempDir("citizen-callgrind-");
  // The profile reads function names: the release build with its symbols.
  const bin = siteBinary(profiling ? "profiling" : "release");
  const ours = await startOursCounted(bin, dir, "ours");
  const expected = await bodies(ours.port, pages);
  const figures = await count(ours.child.pid, ours.port, ours.out, pages, expected);
  ours.child.kill("SIGKILL");
  const recorded = JSON.parse(fs.readFileSync(path.join(root, "bench/results.json"), "utf8")).rows.instructions.pages;
  for (const page of pages) {
    for (const enc of ENCODINGS) {
      const now = figures[page][enc].instructions;
      const then = recorded.find((r) => r.page === page && r.encoding === enc)?.ours;
      const against = then ? `; recorded run ${then.map(Math.round).join(" / ")}, ${fmtChange(now, then)}` : "";
      console.log(`${page} (${enc}): ${Math.round(now)} instructions per request (windows: ${figures[page][enc].windows.map(Math.round).join(", ")})${against}`);
    }
  }
  if (profiling) {
    const libraries = byLibrary(figures["/"].gzip.file, REQUESTS);
    for (const { library, instructions, functions } of libraries) {
      console.log(`${instructions.toFixed(0).padStart(7)}  ${library}`);
      for (const f of functions) console.log(`${f.instructions.toFixed(0).padStart(15)}  ${f.fn.slice(0, 120)}`);
    }
    const profile = {
      date: new Date().toISOString().slice(0, 10),
      valgrind: execFileSync("valgrind", ["--version"], { encoding: "utf8" }).trim(),
      page: "/",
      encoding: "gzip",
      requests: REQUESTS,
      connections: CONNECTIONS,
      total: figures["/"].gzip.instructions,
      libraries,
    };
    fs.writeFileSync(path.join(root, "bench/profile.json"), `${JSON.stringify(profile, null, 2)}\n`);
    writeReadme();
  }
}
