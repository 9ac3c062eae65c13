// The phone Lighthouse's mobile Performance is judged on, made the same
// whatever machine runs it. Lighthouse slows the host's CPU by a fixed
// multiplier (4x), which its guide (docs/throttling.md) calibrates for a
// high-end desktop, benchmark index 1500 to 2000, and says to adjust on
// any other host: on a host half as fast the same 4x emulates a phone
// half as fast, and every task it times (Total Blocking Time, each task
// past 50 ms) is twice as long. CI's machines differ from run to run: the
// same build scored 100 on every route on one and 89 to 99 on eleven
// routes on another, nearly all of it lost on Total Blocking Time.
//
// So the multiplier is this host's: Lighthouse's own benchmark (the one
// each run reports as `benchmarkIndex`) is run in the browser that will
// be measured, and the multiplier takes the host to one phone, of index
// REFERENCE_INDEX / 4: the phone the recorded run of 100 on every route
// was measured on (4x on the 2-core VM it ran on, whose median index was
// about 2,000; tests/lighthouse/results.json keeps the figures). A slower
// host gets less and a faster one more, so that every host emulates that
// phone. This is not the strictest reading of Lighthouse's default: on a
// host of 1,500, inside the range its 4x is meant for, the default would
// emulate a slower phone (375) than this one. Below SLOW_HOST_INDEX,
// where Lighthouse itself warns that a host is too slow for its scores,
// nothing is judged: the run fails, saying so.
import fs from "node:fs";
import { chromium } from "playwright-core";
import * as constants from "lighthouse/core/config/constants.js";
import { pageFunctions } from "lighthouse/core/lib/page-functions.js";
import { median } from "../../bench/report.mjs";

/** The host the recorded run's 4x was measured on: the top of the range
 *  Lighthouse's 4x is calibrated for. */
export const REFERENCE_INDEX = 2000;
/** Lighthouse's own threshold of a host too slow for its scores
 *  (SLOW_CPU_BENCHMARK_INDEX_THRESHOLD, core/gather/driver/environment.js). */
export const SLOW_HOST_INDEX = 1000;
/** Lighthouse's default CPU slowdown for mobile. */
export const DEFAULT_MULTIPLIER = constants.throttling.mobileSlow4G.cpuSlowdownMultiplier;
/** The emulated phone's benchmark index. */
export const PHONE_INDEX = REFERENCE_INDEX / DEFAULT_MULTIPLIER;
/** Benchmark runs (about a second each) whose median is the host's. */
const SAMPLES = 9;


/** The CPU slowdown that takes a host of benchmark index `index` to the
 *  emulated phone (PHONE_INDEX), to two decimals. */
export function multiplierFor(index) {
  if (!(index > 0)) throw new Error(`a benchmark index must be a positive number, not ${index}`);
  if (index < SLOW_HOST_INDEX) {
    throw new Error(`this host's benchmark index is ${index}, below ${SLOW_HOST_INDEX}, where Lighthouse itself says a host is too slow for its scores: nothing is judged on it`);
  }
  return Math.round((index / PHONE_INDEX) * 100) / 100;
}

/** This host's benchmark index, as Lighthouse measures it, in the Chromium
 *  listening for DevTools on `port` (the one the runs will use): the median
 *  of SAMPLES runs of Lighthouse's own benchmark, in a blank tab closed
 *  afterwards. With the multiplier for it and every sample. */
export async function calibrate(port) {
  const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`);
  try {
    const context = browser.contexts()[0] ?? (await browser.newContext());
    const page = await context.newPage();
    const samples = [];
    try {
      for (let i = 0; i < SAMPLES; i++) samples.push(await page.evaluate(`(${pageFunctions.computeBenchmarkIndex})()`));
    } finally {
      await page.close();
    }
    const index = median(samples);
    return { benchmarkIndex: index, samples, cpuSlowdownMultiplier: multiplierFor(index) };
  } finally {
    // Only this connection: the browser itself belongs to the caller.
    await browser.close();
  }
}

/** Lighthouse's flags for a mobile run on the calibrated phone: its
 *  default mobile throttling, with the host's multiplier. */
export function throttlingFlags({ cpuSlowdownMultiplier }) {
  return { throttlingMethod: "simulate", throttling: { ...constants.throttling.mobileSlow4G, cpuSlowdownMultiplier } };
}

/** Each process's CPU time so far, in clock ticks, by pid (Linux /proc). */
function cpuTicks() {
  const ticks = new Map();
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // (ppid is field 4.)
      ticks.set(pid, { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ppid: rest[1], ticks: Number(rest[11]) + Number(rest[12]) });
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks;
}

/** The processes outside this one's tree (its server, its Chromium) that
 *  used more than a tenth of a core over `ms`, the busiest first, as
 *  "name (pid) 35%": what else this host was doing when the phone was
 *  calibrated (a run that fails on a busy host says so). */
export async function busyProcesses(ms = 1000) {
  const before = cpuTicks();
  await new Promise((done) => setTimeout(done, ms));
  const after = cpuTicks();
  const ours = (pid) => {
    for (let at = pid, hops = 0; at && hops < 64; at = after.get(at)?.ppid, hops++) if (at === String(process.pid)) return true;
    return false;
  };
  // Linux's USER_HZ is 100 on every architecture the project builds for.
  const share = (pid, { ticks }) => (ticks - (before.get(pid)?.ticks ?? ticks)) / 100 / (ms / 1000);
  return [...after]
    .filter(([pid]) => !ours(pid))
    .map(([pid, p]) => ({ pid, name: p.name, share: share(pid, p) }))
    .filter((p) => p.share > 0.1)
    .sort((a, b) => b.share - a.share)
    .map((p) => `${p.name} (${p.pid}) ${Math.round(p.share * 100)}%`);
}
