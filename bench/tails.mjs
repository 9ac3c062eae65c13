// Row 3 alone, for the work on its open goals (docs/performance.md, "Where
// a request's time went"): one or more builds of ours and nginx in turn,
// as row 3 runs them, and per server what each request cost it: CPU time
// (in user space and in the kernel, from /proc), its threads' context
// switches (the voluntary ones being the times a thread went to sleep for
// want of work) and minor page faults.
//
//   node bench/tails.mjs [BINARY ...]
//
// With no binary, the release build. BENCH_TAILS=close (a new connection
// per request) or keep (1,000 open connections), both by default; the
// bench's BENCH_DURATION, BENCH_LATENCY_ROUNDS, BENCH_CLOSE_CONNECTIONS and
// BENCH_MANY_CONNECTIONS apply. With BENCH_TAILS_STRACE=1, one more run
// of each server under `strace -c -f` (slowed by it: its latencies are not
// printed) gives its system calls per request, by call. With
// BENCH_TAILS_PERF=1, one more run of each under `perf record` (the
// cpu-clock event, sampled: no hardware counters needed) gives its CPU time
// per request in the kernel and in user space as sampled, which /proc's
// split (by whichever side a clock tick lands on) only approximates, and
// its costliest user-space functions (named with the `profiling` build).
// Those two need strace and perf (Debian: strace, linux-perf).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort, mixScript, siteBinary, startNginx, startSite, tempDir, waitFor, wrk } from "../tests/ops/tools.mjs";
import { SITE_URL } from "./instructions.mjs";
import { CLOSE_CONNECTIONS, DURATION, latencySide, MANY, mirror, NGINX_BROTLI, nginxConfig, PAGES, roundsInTurn } from "./run.mjs";
import { nginxPids } from "./tls.mjs";

const TICK_US = 1e6 / 100; // /proc's clock ticks (USER_HZ)

/** CPU ticks (in user space, in the kernel), context switches
 *  (voluntary, involuntary) and minor page faults of every thread of `pids`. */
function usage(pids) {
  const u = { user: 0, kernel: 0, voluntary: 0, involuntary: 0, faults: 0 };
  for (const pid of pids) {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
        u.faults += Number(stat[7]);
        u.user += Number(stat[11]);
        u.kernel += Number(stat[12]);
        const status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
        u.voluntary += Number(status.match(/^voluntary_ctxt_switches:\s+(\d+)/m)[1]);
        u.involuntary += Number(status.match(/^nonvoluntary_ctxt_switches:\s+(\d+)/m)[1]);
      } catch {
        // A thread that ended between the listing and the read.
      }
    }
  }
  return u;
}

/** `load` (which resolves to wrk's counters) run while `tool ...args`
 *  watches the server (it is given time to attach first, and stopped as
 *  Ctrl-C would when the load is done): the requests made. */
async function watched(tool, args, load) {
  const child = spawn(tool, args, { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { requests } = await load();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  await exited;
  return requests;
}

/** `strace -c -f` on the processes `pids` while `load` runs: per request,
 *  each system call made, and how many of those failed, most made first. */
async function systemCalls(pids, load) {
  const out = path.join(tempDir("citizen-tails-"), "strace.txt");
  const requests = await watched("strace", ["-c", "-f", "-o", out, ...pids.flatMap((p) => ["-p", String(p)])], load);
  // "% time  seconds  usecs/call  calls  [errors]  syscall", then a total.
  return fs
    .readFileSync(out, "utf8")
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => /^\d/.test(c[0] ?? "") && c.at(-1) !== "total")
    .map((c) => ({ name: c.at(-1), perRequest: Number(c[3]) / requests, errors: c.length === 6 ? Number(c[4]) / requests : 0 }))
    .filter((c) => c.perRequest >= 0.01)
    .sort((a, b) => b.perRequest - a.perRequest);
}

/** Samples a second of `perf record`'s cpu-clock event. */
const SAMPLE_HZ = 4999;
/** User-space functions listed per server. */
const TOP = 8;

/** `perf record` on the processes `pids` while `load` runs: per request,
 *  the CPU time in user space and in the kernel, and the TOP user-space
 *  functions by their own time. */
async function sampled(pids, load) {
  const data = path.join(tempDir("citizen-tails-"), "perf.data");
  const requests = await watched("perf", ["record", "-q", "-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-o", data, "-p", pids.join(",")], load);
  const report = execFileSync("perf", ["report", "-i", data, "--sort", "sym", "-n", "--stdio"], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] });
  // "  12.34%  567  [k] symbol": share, samples, kernel (k) or user (.),
  // name; the costliest first.
  const rows = report
    .split("\n")
    .map((l) => l.match(/^\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*)$/))
    .filter(Boolean)
    .map(([, n, side, name]) => ({ name: name.trim(), kernel: side === "k", us: (Number(n) * 1e6) / SAMPLE_HZ / requests }));
  const sum = (xs) => xs.reduce((a, r) => a + r.us, 0);
  const user = rows.filter((r) => !r.kernel);
  return { userUs: sum(user), kernelUs: sum(rows.filter((r) => r.kernel)), top: user.slice(0, TOP) };
}

async function main() {
  const binaries = process.argv.length > 2 ? process.argv.slice(2) : [siteBinary()];
  const servers = [];
  for (const bin of binaries) {
    const port = await freePort();
    const child = startSite(bin, port, { SITE_URL });
    await waitFor(`http://127.0.0.1:${port}/readyz`);
    servers.push({ name: bin, base: `http://127.0.0.1:${port}`, port, pids: () => [child.pid] });
  }
  const { www, pageHeaders } = await mirror(servers[0].port);
  const portN = await freePort();
  const nginx = await startNginx(nginxConfig(www, portN, pageHeaders), `http://127.0.0.1:${portN}/`, { workers: "auto", main: NGINX_BROTLI });
  servers.push({ name: "nginx", base: `http://127.0.0.1:${portN}`, pids: () => nginxPids(nginx.pid) });

  const gzip = { "Accept-Encoding": "gzip" };
  const modes = { close: [CLOSE_CONNECTIONS, { ...gzip, Connection: "close" }], keep: [MANY, gzip] };
  for (const mode of (process.env.BENCH_TAILS ?? "close,keep").split(",")) {
    const [connections, headers] = modes[mode];
    const costs = servers.map(() => []);
    const rounds = await roundsInTurn(servers.map((s) => s.base), connections, headers, async (i, round) => {
      const before = usage(servers[i].pids());
      const counters = await round();
      const after = usage(servers[i].pids());
      const per = (k) => (after[k] - before[k]) / counters.requests;
      costs[i].push({ userUs: per("user") * TICK_US, kernelUs: per("kernel") * TICK_US, voluntary: per("voluntary"), involuntary: per("involuntary"), faults: per("faults") });
      return counters;
    });
    console.log(`\n${mode === "close" ? `a new connection per request, ${connections} at once` : `${connections} open keep-alive connections`}:`);
    for (const [i, s] of servers.entries()) {
      const side = latencySide(rounds[i]);
      const median = (k) => costs[i].map((c) => c[k]).sort((a, b) => a - b)[Math.floor(costs[i].length / 2)];
      console.log(
        `  ${s.name.padEnd(44)} p50 ${side.p50.toFixed(3)} ms, p99 ${side.p99.toFixed(3)} ms, ${side.rps.toFixed(0)} req/s, ` +
          `${side.errors} failed; per request ${median("userUs").toFixed(1)} + ${median("kernelUs").toFixed(1)} µs CPU (user + kernel), ${median("voluntary").toFixed(3)} voluntary and ${median("involuntary").toFixed(3)} involuntary switches, ${median("faults").toFixed(3)} minor faults`,
      );
    }
    const load = (s) => () => wrk({ url: s.base, script: mixScript(PAGES, { headers }), connections, duration: DURATION, timeout: "5s" });
    if (process.env.BENCH_TAILS_PERF === "1") {
      for (const s of servers) {
        const p = await sampled(s.pids(), load(s));
        console.log(`  ${s.name}: sampled by perf, per request ${p.userUs.toFixed(1)} + ${p.kernelUs.toFixed(1)} µs CPU (user + kernel); costliest in user space, µs: ${p.top.map((f) => `${f.name.slice(0, 80)} ${f.us.toFixed(2)}`).join("; ")}`);
      }
    }
    if (process.env.BENCH_TAILS_STRACE === "1") {
      for (const s of servers) {
        const calls = await systemCalls(s.pids(), load(s));
        console.log(`  ${s.name}: system calls per request under strace -c -f: ${calls.map((c) => `${c.name} ${c.perRequest.toFixed(2)}${c.errors >= 0.01 ? ` (${c.errors.toFixed(2)} failed)` : ""}`).join(", ")}`);
      }
    }
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
