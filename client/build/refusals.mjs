// What a build says when the sources are wrong: each error located in the
// sources ({file, line, column, text, lineText}: line and column 1-based),
// the shape the watch build reports to `citizen-site dev`, and the release
// build prints the way dev shows it, with no stack trace.

/** A build stopped by the sources, not by the build: what is wrong, where. */
export class BuildRefused extends Error {
  constructor(errors) {
    super(errors.map((e) => e.text).join("\n"));
    this.errors = errors;
  }
}

/** esbuild's or Tailwind's failure, or a refusal, as located messages, each
 *  once (the server and client builds report the same syntax error). */
export function locatedErrors(err) {
  if (err instanceof BuildRefused) return err.errors;
  const seen = new Set();
  const list = (err?.errors ?? [{ text: err?.message ?? String(err) }]).map((e) => ({
    file: e.location?.file ?? null,
    line: e.location?.line ?? null,
    column: e.location && e.location.column >= 0 ? e.location.column + 1 : null,
    text: e.text,
    lineText: e.location?.lineText ?? null,
  }));
  return list.filter((e) => {
    const key = `${e.file}:${e.line}:${e.column}:${e.text}`;
    return !seen.has(key) && seen.add(key);
  });
}

/** Whether `err` is the sources' fault, said by `locatedErrors`: a refusal,
 *  or esbuild's failure (its errors carry their messages). */
export function isSourcesFault(err) {
  return err instanceof BuildRefused || (Array.isArray(err?.errors) && err.errors.every((e) => typeof e?.text === "string"));
}

/** One error as `dev` shows it (server/dev/problem.rs): `file:line:col:
 *  message`, then the line at fault and a caret under the column. */
export function formatError({ file, line, column, text, lineText }) {
  const at = [file, line, column].filter((x) => x !== null && x !== undefined).join(":");
  let out = `${at ? `${at}: ` : ""}${text}\n`;
  if (lineText !== null && lineText !== undefined && line) {
    const gutter = `${line} | `;
    out += `${gutter}${lineText}\n`;
    if (column) {
      const pad = [...lineText].slice(0, column - 1).map((c) => (c === "\t" ? "\t" : " ")).join("");
      out += `${" ".repeat(gutter.length)}${pad}^\n`;
    }
  }
  return out;
}
