// The stylesheet, by Tailwind's compiler and scanner.
import fs from "node:fs";
import path from "node:path";
import { compile as tailwindCompile, optimize as cssOptimize } from "@tailwindcss/node";
import { Scanner as TailwindScanner } from "@tailwindcss/oxide";
import { hash, root } from "./files.mjs";

/** The stylesheet, by Tailwind's own compiler and scanner (what its CLI runs,
 *  in this process): client/styles.css plus the classes its @source folders
 *  use. Call the returned function for each build, with the files that
 *  changed since the last (watch builds): it keeps the compiler and rescans
 *  only those, unless the stylesheet itself changed. Between full builds a
 *  class no longer used keeps its rule, which changes nothing on screen. */
export function tailwind(minify) {
  const from = path.join(root, "client", "styles.css");
  // What styles.css's @source lines scan (and leave out).
  const scanned = /^(client|ssr-bundle)\/.*\.(tsx?|jsx?|html)$/;
  const notScanned = /^client\/(build\/|build\.mjs$|features\/[^/]+\/content\.ts$)/;
  let input = null;
  let compiler = null;
  let scanner = null;
  return async (changed = null) => {
    const text = fs.readFileSync(from, "utf8");
    let candidates;
    if (text !== input || !changed) {
      compiler = await tailwindCompile(text, { base: path.dirname(from), from, onDependency() {} });
      scanner = new TailwindScanner({ sources: compiler.sources });
      candidates = scanner.scan();
      input = text;
    } else {
      const files = changed.filter((rel) => scanned.test(rel) && !notScanned.test(rel) && fs.existsSync(path.join(root, rel)));
      candidates = scanner.scanFiles(files.map((rel) => ({ file: path.join(root, rel), extension: path.extname(rel).slice(1) })));
    }
    return cssOptimize(compiler.build(candidates), { minify }).code;
  };
}

export function writeCss(assetsDir, css) {
  const name = `app-${hash(css)}.css`;
  fs.writeFileSync(path.join(assetsDir, name), css);
  return `/assets/${name}`;
}
