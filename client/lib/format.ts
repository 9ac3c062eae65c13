// Date formats shared by server and client. Always UTC, so the server's and
// the visitor's time zones render the same text (no hydration mismatch).

const LONG = new Intl.DateTimeFormat("en-US", { dateStyle: "long", timeZone: "UTC" });
const SHORT = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });

const parse = (iso: string) => new Date(`${iso.slice(0, 10)}T00:00:00Z`);

/** "March 15, 2024" */
export const longDate = (iso: string) => LONG.format(parse(iso));
/** "Mar 15, 2024" */
export const shortDate = (iso: string) => SHORT.format(parse(iso));
