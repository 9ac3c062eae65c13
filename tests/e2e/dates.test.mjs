// The site's dates (client/lib/format.ts, written out by hand so that no
// page's hydration waits on the browser's locale data) read as en-US's
// Intl.DateTimeFormat writes them, on every day of two centuries.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { transform } from "esbuild";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const source = fs.readFileSync(path.join(root, "client/lib/format.ts"), "utf8");
const { code } = await transform(source, { loader: "ts", format: "esm" });
const { longDate, shortDate } = await import(`data:text/javascript,${encodeURIComponent(code)}`);

const long = new Intl.DateTimeFormat("en-US", { dateStyle: "long", timeZone: "UTC" });
const short = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });

test("every day from 1900 to 2100 reads as en-US's Intl writes it, long and short", () => {
  const end = Date.UTC(2101, 0, 1);
  let days = 0;
  for (let t = Date.UTC(1900, 0, 1); t < end; t += 86_400_000, days++) {
    const day = new Date(t);
    const iso = day.toISOString().slice(0, 10);
    assert.equal(longDate(iso), long.format(day), iso);
    assert.equal(shortDate(iso), short.format(day), iso);
  }
  assert.equal(days, 73_414);
});

test("a timestamp is read by its day, in UTC, whatever its hour", () => {
  assert.equal(longDate("2024-03-15T23:59:59-11:00"), "March 15, 2024");
  assert.equal(shortDate("2024-12-31T00:30:00+14:00"), "Dec 31, 2024");
});

test("a day past its month's end rolls over as Intl's Date does; what is no date is a RangeError", () => {
  assert.equal(longDate("2023-02-29"), long.format(new Date("2023-02-29T00:00:00Z")));
  assert.equal(longDate("2023-02-29"), "March 1, 2023");
  for (const bad of ["", "soon", "2024-13-01", "15/03/2024"]) {
    assert.throws(() => longDate(bad), RangeError, JSON.stringify(bad));
    assert.throws(() => shortDate(bad), RangeError, JSON.stringify(bad));
    assert.throws(() => long.format(new Date(`${bad.slice(0, 10)}T00:00:00Z`)), RangeError, `Intl too: ${JSON.stringify(bad)}`);
  }
});
