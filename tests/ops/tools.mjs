// What the operations commands (soak, replicas, observatory) and the
// benchmark share: a check for the Debian tools they need (never an
// install: .ci/run installs them), free ports, the server binary started and
// awaited, nginx started from a config, wrk with a Lua script, and RSS
// readings. Temporary directories and databases made here are removed when
// the process exits, however it exits.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

const children = new Set();
const tempDirs = new Set();
const atExit = [];
// Children first (a database cannot be dropped under their connections), then
// what was registered to undo, then the temporary directories.
process.on("exit", () => {
  children.forEach((c) => c.kill("SIGKILL"));
  for (const undo of atExit.splice(0)) undo();
  tempDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
});

/** A new temporary directory, removed when this process exits. */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Fails unless a Debian package's command is there. Installs nothing: the
 *  message names the package (.ci/run installs every one the tests use). */
export function need(cmd, pkg) {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
  } catch {
    throw new Error(`${cmd} is needed: apt-get install ${pkg}`);
  }
}

export async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until `url` answers 2xx. */
export async function waitFor(url, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} not up after ${ms} ms`);
    await sleep(20);
  }
}

/** A new PostgreSQL database for one run, on the server at
 *  TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test):
 *  its `url`, and `drop()` for the end of the run, which also runs when the
 *  process exits without it (a failed run). Needs psql. */
export function createDatabase(prefix) {
  const admin = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  const psql = (sql, url = admin) => execFileSync("psql", [url, "-tAq", "-c", sql], { encoding: "utf8" }).trim();
  psql(`CREATE DATABASE ${name}`);
  const url = `${admin.slice(0, admin.lastIndexOf("/"))}/${name}`;
  let dropped = false;
  const db = {
    url,
    name,
    psql: (sql) => psql(sql, url),
    drop() {
      if (dropped) return;
      dropped = true;
      try {
        psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } catch (e) {
        console.error(`could not drop ${name}: ${e.message}`);
      }
    },
  };
  atExit.push(() => db.drop());
  return db;
}

/** The environment cargo builds in: the prebuilt V8 archive beside the
 *  checkout, where there is one (machines without internet). */
export function cargoEnv() {
  const archive = path.join(root, "..", "shared", "v8", "librusty_v8_simdutf_release_x86_64-unknown-linux-gnu.a.gz");
  const env = { ...process.env };
  if (!env.RUSTY_V8_ARCHIVE && fs.existsSync(archive)) env.RUSTY_V8_ARCHIVE = archive;
  return env;
}

/** The server binary: $CITIZEN_SITE_BIN (cargo test sets it), else a
 *  build of cargo's `profile` (release) made now. */
export function siteBinary(profile = "release") {
  if (process.env.CITIZEN_SITE_BIN) return process.env.CITIZEN_SITE_BIN;
  console.error(`building the ${profile} binary...`);
  execFileSync("cargo", ["build", "--profile", profile, "--quiet"], { cwd: root, env: cargoEnv(), stdio: "inherit" });
  const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "target");
  return path.join(target, profile, "citizen-site");
}

/** Starts the site (`bin` with `args`, `serve` by default) on `port` with
 *  `env` (a SQLite file in a temp dir unless DATABASE_URL is given); returns
 *  the child process. Its stdout is dropped and its stderr shown, unless
 *  `stdio` says otherwise. `wrap` runs it under another command (valgrind:
 *  the child is then valgrind, which is the site's own process). */
export function startSite(bin, port, env = {}, { args = [], stdio = ["ignore", "ignore", "inherit"], wrap = [] } = {}) {
  const dataDir = tempDir("citizen-ops-");
  const [cmd, ...argv] = [...wrap, bin, ...args];
  const child = spawn(cmd, argv, {
    env: {
      ...process.env,
      ADDR: `127.0.0.1:${port}`,
      SITE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: `sqlite://${dataDir}/site.db`,
      RUST_LOG: process.env.RUST_LOG ?? "error",
      ...env,
    },
    stdio,
  });
  children.add(child);
  child.on("exit", () => {
    children.delete(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
    tempDirs.delete(dataDir);
  });
  return child;
}

/** Starts nginx with `http` inside its http {} block (one worker unless
 *  `workers` says otherwise; `workers: 0` is one process, no master) and
 *  `main` before it (load_module lines), each worker taking up to
 *  `connections`; waits for `readyUrl` (`readyMs`; a function for a check
 *  of its own); returns the process. `wrap` runs it under another command
 *  (valgrind). */
export async function startNginx(http, readyUrl, { workers = 1, main = "", wrap = [], readyMs = 60_000, connections = 4096 } = {}) {
  const dir = tempDir("citizen-nginx-");
  fs.mkdirSync(path.join(dir, "tmp"));
  const conf = path.join(dir, "nginx.conf");
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `${t}_temp_path ${dir}/tmp;`).join(" ");
  fs.writeFileSync(conf, `
${main}
user root;
${workers ? `worker_processes ${workers};` : "worker_processes 1; master_process off;"}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log crit;
daemon off;
worker_rlimit_nofile ${connections + 1024};
events { worker_connections ${connections}; }
http {
  access_log off;
  ${temp}
  ${http}
}`);
  const [cmd, ...argv] = [...wrap, "nginx", "-c", conf, "-p", dir];
  const child = spawn(cmd, argv, { stdio: "inherit" });
  children.add(child);
  const exited = new Promise((_, reject) => child.on("exit", (code) => reject(new Error(`nginx exited (${code}) before it answered ${readyUrl}`))));
  exited.catch(() => {});
  if (readyUrl) await Promise.race([typeof readyUrl === "function" ? readyUrl() : waitFor(readyUrl, readyMs), exited]);
  return child;
}

/** Writes a wrk Lua script that walks `paths` in turn and counts answers
 *  by class; `{n}` in a path becomes a request counter (a fresh URL each
 *  time). Every 4xx and 5xx is an error, 404 included: wrk cannot tell which
 *  path an answer belongs to, so a route that must answer 404 gets its own
 *  script, with `expect: 404`, where any other status is the error (a 2xx or
 *  3xx counted as `wrong`). `headers` go with every request. The summary
 *  line starts with OPS. */
export function mixScript(paths, { expect = null, headers = {} } = {}) {
  const file = path.join(tempDir("citizen-wrk-"), "mix.lua");
  fs.writeFileSync(file, `
local paths = { ${paths.map((p) => JSON.stringify(p)).join(", ")} }
local expect = ${expect === null ? "nil" : Number(expect)}
local headers = { ${Object.entries(headers).map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join(", ")} }
local threads = {}
function setup(thread) table.insert(threads, thread); thread:set("tid", #threads) end
function init(args) n = 0; ok = 0; client_errors = 0; server_errors = 0; wrong = 0 end
function request()
  n = n + 1
  local p = paths[(n % #paths) + 1]:gsub("{n}", tid .. "-" .. n)
  return wrk.format("GET", p, headers)
end
function response(status, headers, body)
  if status == expect then ok = ok + 1
  elseif status >= 500 then server_errors = server_errors + 1
  elseif status >= 400 then client_errors = client_errors + 1
  elseif expect then wrong = wrong + 1
  else ok = ok + 1 end
end
function done(summary, latency, requests)
  local ok_, c, s, w = 0, 0, 0, 0
  for _, t in ipairs(threads) do ok_ = ok_ + t:get("ok"); c = c + t:get("client_errors"); s = s + t:get("server_errors"); w = w + t:get("wrong") end
  io.write(string.format("OPS ok=%d client_errors=%d server_errors=%d wrong=%d socket_errors=%d timeouts=%d p50_us=%d p99_us=%d requests=%d duration_us=%d\\n",
    ok_, c, s, w, summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), summary.requests, summary.duration))
end
`);
  return file;
}

/** Runs wrk (asynchronously) and resolves with the script's counters. */
export function wrk({ url, script, connections, duration, threads = 2, timeout = "10s" }) {
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", [`-t${threads}`, `-c${connections}`, `-d${duration}`, `--timeout`, timeout, "-s", script, url], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("OPS "));
      if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}):\n${out}`));
      const counts = Object.fromEntries(line.slice(4).split(" ").map((kv) => kv.split("=")).map(([k, v]) => [k, Number(v)]));
      resolve(counts);
    });
  });
}

/** Resident memory of a process, in MB. */
export function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(status.match(/VmRSS:\s+(\d+) kB/)[1]) / 1024;
}

/** "10s" / "2m" / "500ms" in milliseconds. */
export function durationMs(text) {
  const m = String(text).match(/^(\d+(?:\.\d+)?)(ms|s|m)?$/);
  if (!m) throw new Error(`not a duration: ${text}`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n : m[2] === "m" ? n * 60_000 : n * 1000;
}

/** A Markdown table. */
export function table(head, rows) {
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** A copy of the checkout's sources in a temp dir, for `citizen-site dev`
 *  to serve and a test or benchmark to edit: client/, ssr-bundle/,
 *  content/ and the npm files, with node_modules linked (not copied). With
 *  `crate`, also what `cargo build` needs, so the same edit can be rebuilt. */
export function copyTree({ crate = false } = {}) {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-tree-"));
  const parts = ["client", "ssr-bundle", "content", "package.json", "package-lock.json", "tsconfig.json"];
  // The workspace's other member too: cargo reads every member's manifest.
  // (whose client shares the tests' HTTP/3 module).
  if (crate) parts.push("Cargo.toml", "Cargo.lock", "build.rs", "server", "migrations", "bench/h3-load", "tests/support/h3.rs");
  for (const part of parts) fs.cpSync(path.join(root, part), path.join(tree, part), { recursive: true });
  fs.symlinkSync(path.join(root, "node_modules"), path.join(tree, "node_modules"));
  return tree;
}

/** Runs `bin dev --root tree` on a free port and waits until it answers.
 *  Everything it prints (the builder's output included) is kept in `output`. */
export async function startDev(bin, tree, env = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = startSite(bin, port, { RUST_LOG: process.env.RUST_LOG ?? "info", NO_COLOR: "1", ...env }, {
    args: ["dev", "--root", tree],
    stdio: ["ignore", "pipe", "pipe"],
  });
  const dev = { base, child, output: "" };
  for (const stream of [child.stdout, child.stderr]) stream.on("data", (d) => (dev.output += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dev exited with ${child.exitCode}:\n${dev.output}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`dev not ready after 120 s:\n${dev.output}`);
    await sleep(50);
  }
  dev.stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  return dev;
}

/** Replaces `from` with `to` in `tree/file` (which must contain it). */
export function edit(tree, file, from, to) {
  const full = path.join(tree, file);
  const text = fs.readFileSync(full, "utf8");
  if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
  fs.writeFileSync(full, text.replace(from, to));
}

/** Polls GET `url` until `accept(status, body)` holds; resolves with the
 *  answer, or rejects after `ms` with the last one. */
export async function until(url, accept, ms = 30_000) {
  const deadline = Date.now() + ms;
  let last = null;
  for (;;) {
    try {
      const res = await fetch(url);
      last = { status: res.status, body: await res.text() };
      if (accept(last.status, last.body)) return last;
    } catch (e) {
      last = { status: 0, body: String(e) };
    }
    if (Date.now() > deadline) throw new Error(`${url}: not as expected within ${ms} ms; last answer ${last.status}:\n${last.body.slice(0, 2000)}`);
    await sleep(5);
  }
}
