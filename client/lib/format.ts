// Date formats shared by server and client. Always UTC, so the server's and
// the visitor's time zones render the same text (no hydration mismatch).
// Written out by hand, in the words en-US's Intl.DateTimeFormat uses
// (tests/e2e/dates.test.mjs holds them to it): a page's first
// Intl.DateTimeFormat loads the browser's locale data, the longest piece of
// hydrating /blog or /terms on a phone (a task of ~20 ms at 4x CPU,
// Lighthouse's Total Blocking Time).

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** The day `iso` (its first ten characters, YYYY-MM-DD) names, in UTC; a
 *  day past its month's end rolls over into the next, as Date does.
 *  Anything else is a RangeError, as Intl's format gives. */
function day(iso: string): { year: number; month: number; date: number } {
  const d = new Date(`${iso.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) throw new RangeError(`not a date: ${JSON.stringify(iso)}`);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth(), date: d.getUTCDate() };
}

/** "March 15, 2024" */
export function longDate(iso: string): string {
  const { year, month, date } = day(iso);
  return `${MONTHS[month]} ${date}, ${year}`;
}

/** "Mar 15, 2024": every month's first three letters */
export function shortDate(iso: string): string {
  const { year, month, date } = day(iso);
  return `${MONTHS[month]!.slice(0, 3)} ${date}, ${year}`;
}
