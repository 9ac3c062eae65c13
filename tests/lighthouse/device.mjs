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
// be measured, and the multiplier takes the host to the phone that 4x
// makes of the fastest host 4x is meant for, REFERENCE_INDEX / 4. On such
// a host (the 2-core VM this was written on measured a median of 1,997.5) it is 4x,
// Lighthouse's default; a slower host gets less and a faster one more,
// so that every host emulates the same phone.
import fs from "node:fs";
import { chromium } from "playwright-core";
import * as constants from "lighthouse/core/config/constants.js";
import { pageFunctions } from "lighthouse/core/lib/page-functions.js";

/** The top of the host range Lighthouse's 4x is calibrated for. */
export const REFERENCE_INDEX = 2000;
/** Lighthouse's default CPU slowdown for mobile. */
export const DEFAULT_MULTIPLIER = constants.throttling.mobileSlow4G.cpuSlowdownMultiplier;
/** The emulated phone's benchmark index. */
export const PHONE_INDEX = REFERENCE_INDEX / DEFAULT_MULTIPLIER;
/** Benchmark runs (about a second each) whose median is the host's. */
const SAMPLES = 5;

/** The median of a list of numbers. */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The CPU slowdown that takes a host of benchmark index `index` to the
 *  emulated phone (PHONE_INDEX), to two decimals. */
export function multiplierFor(index) {
  if (!(index > 0)) throw new Error(`a benchmark index must be a positive number, not ${index}`);
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
