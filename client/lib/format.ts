// Date formats shared by server and client. Always UTC, so the server's and
// the visitor's time zones render the same text (no hydration mismatch).
// The formatters are made on first use: an Intl object cannot be part of the
// server's V8 startup snapshot, which captures module-level state.

let long: Intl.DateTimeFormat | undefined;
let short: Intl.DateTimeFormat | undefined;

const parse = (iso: string) => new Date(`${iso.slice(0, 10)}T00:00:00Z`);

/** "March 15, 2024" */
export function longDate(iso: string): string {
  long ??= new Intl.DateTimeFormat("en-US", { dateStyle: "long", timeZone: "UTC" });
  return long.format(parse(iso));
}

/** "Mar 15, 2024" */
export function shortDate(iso: string): string {
  short ??= new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });
  return short.format(parse(iso));
}
