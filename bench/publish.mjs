// Row 16 of the bench: publishing a post. On a copy of the checkout, a
// one-word change to a post, then `citizen-site pack` (the release binary)
// writes the new binary, RUNS times with another word each time; the peer
// is `cargo build --release` of the same copy after the same change
// (BENCH_PUBLISH_REBUILDS times, default 1; 0 skips it). Then the whole
// publish under load: the release binary serves HTTPS from a path of its
// own, bench/swap-load.mjs keeps its load running, and each packed binary
// in turn is installed at that path and `citizen-site upgrade` swaps the
// process (the load checks every body against the versions of its page).
// Beside it, start to ready (every page prerendered) of the built binary
// and of one packed from the same copy, START_RUNS times each.
//
//   node bench/publish.mjs    this row alone: rewrites bench/results.json's
//                             rows.publish and the guides' table
//
// Targets: pack at most 10 s (median), no request failed, the packed
// binary's start within 10 % of the built one's.
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";
import { copyTree, freePort, need, root, siteBinary, tempDir } from "../tests/ops/tools.mjs";
import { snapshot, startLoad } from "./swap-load.mjs";
import { install, serveTls } from "./swaps.mjs";
import { certificate } from "./tls.mjs";
import { median } from "./report.mjs";

const RUNS = Number(process.env.BENCH_PUBLISH_RUNS ?? 3);
const REBUILDS = Number(process.env.BENCH_PUBLISH_REBUILDS ?? 1);
const START_RUNS = Number(process.env.BENCH_PUBLISH_START_RUNS ?? 7);
const POST = "content/blog/brussels-pay-launch.md";
/** The word changed, and what it becomes in each run. */
const WORD = "Brussels";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 1) => Number(x.toFixed(d));

/** The post with its last WORD (in the body) replaced by `word`. */
function edit(tree, word) {
  const file = path.join(tree, POST);
  const text = fs.readFileSync(path.join(root, POST), "utf8");
  const at = text.lastIndexOf(WORD);
  fs.writeFileSync(file, text.slice(0, at) + word + text.slice(at + WORD.length));
}

/** Milliseconds from spawn to the first 200 of /readyz (every page made). */
export async function startToReady(bin) {
  const port = await freePort();
  const dir = tempDir("citizen-publish-start-");
  const t0 = process.hrtime.bigint();
  const child = spawn(bin, ["serve"], {
    env: { PATH: process.env.PATH, ADDR: `127.0.0.1:${port}`, DATABASE_URL: `sqlite://${dir}/site.db`, SITE_URL: "http://localhost" },
    stdio: "ignore",
  });
  try {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) break;
      } catch {}
      if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode}`);
      await sleep(2);
    }
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    child.kill("SIGKILL");
  }
}

export async function publishRow(bin) {
  need("openssl", "openssl");
  need("node", "nodejs");
  const tree = copyTree({ crate: true });
  const out = tempDir("citizen-publish-");
  // Each pack's own word on the part that renders every page of the new
  // binary before it is written ("its N pages rendered in X s").
  const proofs = [];
  const pack = (to) => {
    const t0 = process.hrtime.bigint();
    const said = execFileSync(bin, ["pack", to], { cwd: tree, stdio: ["ignore", "pipe", "inherit"] }).toString();
    const proof = said.match(/its (\d+) pages rendered in ([\d.]+) s/);
    if (!proof) throw new Error(`pack did not say how long its pages took to render: ${said}`);
    proofs.push({ pages: Number(proof[1]), seconds: Number(proof[2]) });
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };

  // The same copy, packed: for the start times (and a first, untimed pack).
  const same = path.join(out, "same");
  pack(same);
  const startsBuilt = [];
  const startsPacked = [];
  for (let i = 0; i < START_RUNS; i++) {
    startsBuilt.push(await startToReady(bin));
    startsPacked.push(await startToReady(same));
  }

  // A one-word change, packed: RUNS versions of the post.
  const versions = [];
  const packSeconds = [];
  for (let i = 0; i < RUNS; i++) {
    edit(tree, `Bruxelles${i + 1}`);
    const to = path.join(out, `site-${i + 1}`);
    console.error(`pack after a one-word change (${i + 1}/${RUNS})...`);
    packSeconds.push(round(pack(to)));
    versions.push(to);
  }
  const timedProofs = proofs.slice(-RUNS);

  // The peer: cargo build --release of the same copy after the same change.
  const cargoSeconds = [];
  if (REBUILDS > 0) {
    const env = { ...process.env, CARGO_TARGET_DIR: path.join(process.env.CARGO_TARGET_DIR ?? path.join(root, "target"), "bench-dev") };
    const cargo = () => {
      const t0 = process.hrtime.bigint();
      execFileSync("cargo", ["build", "--release", "--quiet"], { cwd: tree, env, stdio: ["ignore", "ignore", "inherit"] });
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    console.error(`cargo build --release of the copy, once before timing (${env.CARGO_TARGET_DIR})...`);
    cargo();
    for (let i = 0; i < REBUILDS; i++) {
      edit(tree, `Brussel${i + 1}`);
      console.error("cargo build --release after a one-word change...");
      cargoSeconds.push(round(cargo()));
    }
  }

  // The whole publish under load: each packed version in turn.
  const dir = tempDir("citizen-publish-load-");
  const certs = certificate(dir);
  const expect = {};
  for (const version of [bin, ...versions]) {
    const s = await serveTls(version, certs, tempDir("citizen-publish-snap-"));
    for (const [p, h] of Object.entries(await snapshot(s.options))) (expect[p] ||= []).push(h);
    s.child.kill("SIGKILL");
  }
  const at = path.join(dir, "citizen-site");
  install(bin, at);
  const server = await serveTls(at, certs, dir);
  let pid = server.child.pid;
  const upgradeSeconds = [];
  try {
    const load = startLoad({ ...server.options, expect });
    await sleep(3000);
    for (const version of versions) {
      install(version, at);
      load.mark("swap");
      const t0 = process.hrtime.bigint();
      const { stdout: said } = await promisify(execFile)(at, ["upgrade", "--pid", String(pid)], { encoding: "utf8" });
      upgradeSeconds.push(round(Number(process.hrtime.bigint() - t0) / 1e9, 2));
      pid = Number(said.match(/upgraded: pid (\d+)/)?.[1] ?? NaN);
      if (!pid) throw new Error(`upgrade: ${said}`);
      load.mark("settled");
      await sleep(2000);
    }
    const r = await load.stop();
    return {
      date: new Date().toISOString().slice(0, 10),
      packSeconds,
      packMedianSeconds: median(packSeconds),
      proof: { pages: timedProofs[0].pages, seconds: timedProofs.map((p) => p.seconds) },
      cargoSeconds,
      cargoMedianSeconds: cargoSeconds.length ? median(cargoSeconds) : null,
      binaryMb: round(fs.statSync(versions[0]).size / 1e6),
      startMs: { built: round(median(startsBuilt)), packed: round(median(startsPacked)) },
      publishes: r.swaps,
      upgradeSeconds,
      requests: r.requests,
      failed: r.failed,
      failures: r.failures,
      withoutPublish: r.latencyMs.steady,
      duringPublish: r.latencyMs.duringSwaps,
    };
  } finally {
    try { process.kill(pid, "SIGTERM"); } catch {}
    server.child.kill("SIGKILL");
    fs.rmSync(tree, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { recordRow, TARGETS } = await import("./report.mjs");
  const bin = siteBinary();
  console.error(`row 16: ${RUNS} packs after a one-word change, then each published under load...`);
  const row = await publishRow(bin);
  recordRow("publish", row);
  console.log(JSON.stringify(row, null, 2));
  const ok = row.failed === 0 && row.packMedianSeconds <= TARGETS.packSeconds && row.startMs.packed <= row.startMs.built * (1 + TARGETS.packedStart);
  process.exit(ok ? 0 : 1);
}
