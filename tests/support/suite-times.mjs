// Each suite's time in a `cargo nextest run` (.ci/run reads the ci
// profile's JUnit report, target/nextest/ci/junit.xml): its tests, the
// time they took added up, and the wall-clock span from its first start
// to its last end (suites run side by side, so the spans overlap). Then
// the slowest tests. Usage: node tests/support/suite-times.mjs JUNIT.xml
import fs from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node tests/support/suite-times.mjs JUNIT.xml");
  process.exit(2);
}
const xml = fs.readFileSync(file, "utf8");
const attr = (tag, name) => tag.match(new RegExp(`\\s${name}="([^"]*)"`))?.[1];

const suites = new Map();
const cases = [];
let binary = "";
for (const tag of xml.match(/<(testsuite|testcase)\s[^>]*>/g) ?? []) {
  if (tag.startsWith("<testsuite ")) {
    binary = attr(tag, "name") ?? "";
    continue;
  }
  const name = attr(tag, "name") ?? "";
  const seconds = Number(attr(tag, "time") ?? 0);
  const start = Date.parse(attr(tag, "timestamp") ?? "");
  // The integration tests' suite is their first module; a crate's own
  // unit tests are one suite.
  const suite = binary.endsWith("::suite") ? name.split("::")[0] : `${binary} (unit tests)`;
  cases.push({ name: binary.endsWith("::suite") ? name : `${binary}: ${name}`, seconds });
  const s = suites.get(suite) ?? { tests: 0, seconds: 0, first: Infinity, last: -Infinity };
  s.tests += 1;
  s.seconds += seconds;
  if (Number.isFinite(start)) {
    s.first = Math.min(s.first, start);
    s.last = Math.max(s.last, start + seconds * 1000);
  }
  suites.set(suite, s);
}
if (cases.length === 0) {
  console.error(`${file}: no test cases`);
  process.exit(1);
}

const rows = [...suites].sort((a, b) => b[1].seconds - a[1].seconds);
const width = Math.max(...rows.map(([n]) => n.length), 5);
console.log(`\n${"suite".padEnd(width)}  tests  test time  span`);
for (const [name, s] of rows) {
  const span = Number.isFinite(s.first) ? `${((s.last - s.first) / 1000).toFixed(0)} s` : "-";
  console.log(`${name.padEnd(width)}  ${String(s.tests).padStart(5)}  ${s.seconds.toFixed(0).padStart(7)} s  ${span}`);
}
const total = cases.reduce((n, c) => n + c.seconds, 0);
console.log(`${"all".padEnd(width)}  ${String(cases.length).padStart(5)}  ${total.toFixed(0).padStart(7)} s`);
console.log("\nslowest:");
for (const c of cases.sort((a, b) => b.seconds - a.seconds).slice(0, 8)) {
  console.log(`  ${c.seconds.toFixed(1).padStart(6)} s  ${c.name}`);
}
