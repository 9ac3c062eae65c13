// Row 15 of the bench: the worst wait of a visitor while the site is
// published under systemd, `systemctl reload` (the successor takes over
// once it is ready) against `systemctl restart` (the old process drains,
// then the new one starts and renders), on the release binary.
//
// It runs the live-systemd test (tests/live_systemd.rs: a real systemd 252
// in a throwaway root, the unit and its sockets installed as
// docs/deploy.md says) with LIVE_SYSTEMD_BIN naming the release binary.
// Inside, bench/swap-load.mjs keeps its load running (keep-alive HTTP/1.1,
// HTTP/2 streams, a new connection per request, form posts) over HTTPS
// through five restarts, then three reloads; the test writes what the
// load saw to LIVE_SYSTEMD_WAITS_OUT.
//
//   node bench/reload.mjs    this row alone: rewrites bench/results.json's
//                            rows.reloads and docs/deploy.md's table
// Needs root (the throwaway systemd), as `cargo test` does.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { siteBinary, tempDir } from "../tests/ops/tools.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

/** The live-systemd test's executable (a debug build: the tests' harness;
 *  the server it installs is the binary named). */
function liveSystemdTest() {
  const out = execFileSync(
    "cargo",
    ["test", "--test", "live_systemd", "--no-run", "--message-format=json", "--quiet"],
    { cwd: root, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  for (const line of out.split("\n")) {
    if (!line.startsWith("{")) continue;
    const m = JSON.parse(line);
    if (m.reason === "compiler-artifact" && m.target?.name === "live_systemd" && m.executable) return m.executable;
  }
  throw new Error("cargo did not name the live_systemd test's executable");
}

export function reloadRow(bin) {
  const dir = tempDir("citizen-reload-");
  const out = path.join(dir, "waits.json");
  execFileSync(liveSystemdTest(), ["--nocapture"], {
    cwd: root,
    env: { ...process.env, LIVE_SYSTEMD_BIN: bin, LIVE_SYSTEMD_WAITS_OUT: out },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const waits = JSON.parse(fs.readFileSync(out, "utf8"));
  const of = (w) => ({ swaps: w.swaps, requests: w.requests, failed: w.failed, steady: w.steady, during: w.during });
  return { date: new Date().toISOString().slice(0, 10), restart: of(waits.restart), reload: of(waits.reload) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { recordRow, TARGETS } = await import("./report.mjs");
  const bin = siteBinary();
  console.error("row 15: systemctl restart and reload under load, under a live systemd...");
  const row = reloadRow(bin);
  recordRow("reloads", row);
  console.log(JSON.stringify(row, null, 2));
  const ok = row.reload.failed === 0 && row.restart.failed === 0 && row.reload.during.max < TARGETS.reloadWorstMs;
  process.exit(ok ? 0 : 1);
}
