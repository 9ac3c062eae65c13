// The one front-end build, run two ways:
//
//   node client/build.mjs OUT           the release build: build.rs runs it and
//                                       embeds OUT in the binary (also `npm run build`)
//   node client/build.mjs --watch OUT   for `citizen-site dev`: builds into
//                                       OUT/gen-N/, then rebuilds on every change
//                                       and reports each build on stdout
//
// Both emit the same files from the same esbuild options and Tailwind:
//   ssr.js          the server bundle (IIFE, evaluated once per V8 isolate)
//   assets/*        hashed client ES modules (one chunk per page), the CSS,
//                   static images
//   manifest.json   what the Rust server needs: entry, CSS, per-page chunks
//                   with their static imports, images (with the size and alt
//                   text of the PNGs drawn here), and every file served
// The release build also minifies, draws the preview cards and precompresses
// every asset (.br and .gz siblings); the watch build skips those and adds
// source maps, so a rebuild takes a fraction of a second.
import * as esbuild from "esbuild";
import { compile as tailwindCompile, optimize as cssOptimize } from "@tailwindcss/node";
import { Scanner as TailwindScanner } from "@tailwindcss/oxide";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import zlib from "node:zlib";
import { Resvg } from "@resvg/resvg-js";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const args = process.argv.slice(2);
const watch = args.includes("--watch");
const out = path.resolve(args.find((a) => !a.startsWith("--")) ?? path.join(root, "target", "web"));

const TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".json": "application/json",
  ".ico": "image/x-icon",
};

/** esbuild options for the server bundle and the client modules. `base` is
 *  where they are written (release) or would be (watch, written by us). */
function esbuildOptions(base, dev) {
  const shared = {
    bundle: true,
    minify: !dev,
    legalComments: "none",
    jsx: "automatic",
    target: "es2022",
    define: { "process.env.NODE_ENV": dev ? '"development"' : '"production"' },
    logLevel: dev ? "silent" : "warning",
    absWorkingDir: root,
    // Images imported from TSX become hashed files under /assets/.
    loader: { ".svg": "file", ".png": "file", ".jpg": "file", ".webp": "file" },
    assetNames: "[name]-[hash]",
    publicPath: "/assets",
    plugins: [onlyUsedIcons()],
    write: !dev,
  };
  return {
    // One classic script that defines globalThis.__ssr_render.
    ssr: {
      ...shared,
      entryPoints: ["ssr-bundle/entry-server.tsx"],
      outfile: path.join(base, "ssr.js"),
      format: "iife",
      platform: "neutral",
      mainFields: ["module", "main"],
      conditions: ["worker", "browser"],
      // React's production build renders the same HTML as its development
      // build, loads into an isolate in half the time and renders faster;
      // its warnings come from the client's development build instead.
      define: { "process.env.NODE_ENV": '"production"' },
      // The dev server maps a render's stack trace back to the sources with
      // this map (positions only: it reads the sources from disk).
      sourcemap: dev ? "external" : false,
      sourcesContent: false,
    },
    // ES modules, code-split so each page is its own chunk.
    client: {
      ...shared,
      // `boot` is the one script a page names; it loads `entry` and the
      // page's chunks after the document is parsed (see client/boot.ts).
      entryPoints: { entry: "client/entry-client.tsx", boot: "client/boot.ts" },
      outdir: path.join(base, "assets"),
      format: "esm",
      splitting: true,
      platform: "browser",
      entryNames: "[name]-[hash]",
      chunkNames: "[name]-[hash]",
      metafile: true,
    },
  };
}

/** lucide-react's entry re-exports its 2,000 icons, one module each: esbuild
 *  links them all on every build (three quarters of a rebuild's time) to keep
 *  the 60 the site uses. This plugin hands esbuild that entry cut down to the
 *  exports the sources import by name, so both builds link only those. An
 *  import of a name the cut entry lacks fails as it would with the full one. */
function onlyUsedIcons() {
  let names = new Set();
  // `export { default as Nfc, default as NfcIcon } from './icons/nfc.mjs';` -> Nfc, NfcIcon
  const exportedBy = (line) => [...(line.match(/^export\s*\{([^}]*)\}/)?.[1] ?? "").split(",")].map((s) => s.trim().split(/\s+as\s+/).pop());
  return {
    name: "only-used-icons",
    setup(build) {
      build.onStart(() => {
        names = usedIcons();
      });
      build.onLoad({ filter: /[\\/]lucide-react[\\/]dist[\\/]esm[\\/]lucide-react\.mjs$/ }, (args) => {
        const kept = fs
          .readFileSync(args.path, "utf8")
          .split("\n")
          // The `icons` namespace object is every icon at once: left out.
          .filter((line) => !/^import \* as|^export \{ index as icons \}/.test(line))
          .filter((line) => !line.startsWith("export {") || exportedBy(line).some((n) => names.has(n)));
        return { contents: kept.join("\n"), loader: "js", resolveDir: path.dirname(args.path) };
      });
    },
  };
}

/** Every name the sources import from lucide-react. */
function usedIcons() {
  const importsOf = /import\s*\{([^}]*)\}\s*from\s*["']lucide-react["']/g;
  const names = new Set();
  for (const dir of ["client", "ssr-bundle", "content"]) {
    for (const file of walk(path.join(root, dir))) {
      if (!/\.[jt]sx?$/.test(file)) continue;
      for (const m of fs.readFileSync(file, "utf8").matchAll(importsOf)) {
        for (const spec of m[1].split(",")) {
          const [name] = spec.trim().split(/\s+as\s+/);
          if (name && !name.startsWith("type ")) names.add(name);
        }
      }
    }
  }
  return names;
}

/** The stylesheet, by Tailwind's own compiler and scanner (what its CLI runs,
 *  in this process): client/styles.css plus the classes its @source folders
 *  use. Call the returned function for each build, with the files that
 *  changed since the last (watch builds): it keeps the compiler and rescans
 *  only those, unless the stylesheet itself changed. Between full builds a
 *  class no longer used keeps its rule, which changes nothing on screen. */
function tailwind(minify) {
  const from = path.join(root, "client", "styles.css");
  const scanned = /^(client|ssr-bundle)\/.*\.(tsx?|jsx?|html)$/;
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
      const files = changed.filter((rel) => scanned.test(rel) && fs.existsSync(path.join(root, rel)));
      candidates = scanner.scanFiles(files.map((rel) => ({ file: path.join(root, rel), extension: path.extname(rel).slice(1) })));
    }
    return cssOptimize(compiler.build(candidates), { minify }).code;
  };
}

/** content/images/DIR/NAME.EXT is served as /assets/images/DIR/NAME-HASH.EXT,
 *  immutable like the scripts; returns each path's URL (logos and blog images
 *  are linked by the Rust loaders through the manifest). */
function copyImages(assetsDir) {
  const images = {};
  const imagesSrc = path.join(root, "content", "images");
  for (const file of walk(imagesSrc)) {
    const rel = path.relative(imagesSrc, file).split(path.sep).join("/");
    const body = fs.readFileSync(file);
    const ext = path.extname(rel);
    const hashedRel = `${rel.slice(0, -ext.length)}-${hash(body)}${ext}`;
    const dest = path.join(assetsDir, "images", hashedRel);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.writeFileSync(dest, body);
    images[rel] = `/assets/images/${hashedRel}`;
  }
  return images;
}

/** The favicon set: PNG renderings of content/images/favicon.svg for browsers
 *  and home screens that do not take SVG icons. Drawn once per version of the
 *  SVG (a watch build reuses them). */
const faviconCache = new Map();
function favicons(assetsDir, images, rasters) {
  const svg = fs.readFileSync(path.join(root, "content", "images", "favicon.svg"));
  const key = hash(svg);
  if (!faviconCache.has(key)) {
    faviconCache.clear();
    faviconCache.set(key, [32, 180, 192, 512].map((size) => [size, new Resvg(svg, { fitTo: { mode: "width", value: size } }).render().asPng()]));
  }
  for (const [size, png] of faviconCache.get(key)) {
    const file = `icon-${size}-${hash(png)}.png`;
    fs.writeFileSync(path.join(assetsDir, "images", file), png);
    images[`icon-${size}.png`] = `/assets/images/${file}`;
    rasters[`icon-${size}.png`] = { ...pngSize(png), alt: "Citizen Wallet logo" };
  }
}

/** Width and height of a PNG, from its header (what the image really is,
 *  not what it was asked to be). */
function pngSize(png) {
  if (png.subarray(12, 16).toString("latin1") !== "IHDR") throw new Error("not a PNG");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** What the manifest says about the client modules: the entry, the chunks it
 *  imports statically, and per page its chunk plus every chunk that imports
 *  statically, so the boot module can preload exactly what a route needs. */
function modulesOf(metafile, base) {
  const outputs = metafile.outputs;
  const urlOf = (file) => "/" + path.relative(base, path.resolve(root, file)).split(path.sep).join("/");
  const closure = (file, seen = new Set()) => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const imp of outputs[file].imports) {
      if (imp.kind === "import-statement" && outputs[imp.path]) closure(imp.path, seen);
    }
    return seen;
  };
  let entry = null;
  let boot = null;
  const pages = {};
  // Per page, every source file its first load runs (for the watch build's
  // error reports: which pages a broken file breaks).
  const sources = {};
  const inputsOf = (files) => [...files].flatMap((f) => Object.keys(outputs[f].inputs));
  for (const [file, meta] of Object.entries(outputs)) {
    if (!file.endsWith(".js") || !meta.entryPoint) continue;
    if (meta.entryPoint === "client/entry-client.tsx") {
      entry = file;
    } else if (meta.entryPoint === "client/boot.ts") {
      boot = file;
    } else if (meta.entryPoint.startsWith("client/pages/")) {
      const page = path.basename(meta.entryPoint).replace(/\.tsx?$/, "");
      pages[page] = [...closure(file)].map(urlOf);
      sources[page] = inputsOf(closure(file));
    }
  }
  if (!entry || !boot) throw new Error("esbuild produced no client entry or no boot module");
  const entryClosure = [...closure(entry)];
  return {
    modules: { boot: urlOf(boot), entry: urlOf(entry), entryImports: entryClosure.slice(1).map(urlOf), pages },
    sources: { shared: inputsOf(entryClosure), pages: sources },
  };
}

/** Every file under `assetsDir` for the manifest (and build.rs). */
function listFiles(base, assetsDir, compressed) {
  const files = [];
  for (const file of walk(assetsDir)) {
    const ext = path.extname(file);
    if (ext === ".map" && compressed) continue;
    const type = TYPES[ext] ?? "application/octet-stream";
    const compressible = compressed && !/^image\/(png|jpeg|webp)$/.test(type);
    if (compressible) {
      const body = fs.readFileSync(file);
      fs.writeFileSync(file + ".br", zlib.brotliCompressSync(body, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }));
      fs.writeFileSync(file + ".gz", zlib.gzipSync(body, { level: 9 }));
    }
    files.push({ url: "/" + path.relative(base, file).split(path.sep).join("/"), file: path.relative(base, file), type, compressed: compressible });
  }
  return files;
}

function writeCss(assetsDir, css) {
  const name = `app-${hash(css)}.css`;
  fs.writeFileSync(path.join(assetsDir, name), css);
  return `/assets/${name}`;
}

async function releaseBuild() {
  const assetsDir = path.join(out, "assets");
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(assetsDir, { recursive: true });
  const options = esbuildOptions(out, false);
  await esbuild.build(options.ssr);
  const client = await esbuild.build(options.client);
  const css = writeCss(assetsDir, await tailwind(true)());
  const images = copyImages(assetsDir);
  const rasters = {};
  // The server bundle just built, evaluated once for what is drawn from it.
  const ssr = ssrContext(fs.readFileSync(path.join(out, "ssr.js"), "utf8"));
  previewCards(assetsDir, images, rasters, ssr);
  favicons(assetsDir, images, rasters);
  const { modules } = modulesOf(client.metafile, out);
  const files = listFiles(out, assetsDir, true);
  const errorScreen = errorScreenTemplate(ssr);
  fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify({ ...modules, css, images, rasters, files, errorScreen }, null, 2));
}

/** A Node vm context in which the server bundle `code` has run: its
 *  globalThis has __ssr_render, __ssr_error_screen and __ssr_meta. */
function ssrContext(code) {
  const context = vm.createContext({ console });
  vm.runInContext(code, context, { filename: "ssr.js" });
  return context;
}

/** The error screen's markup, made by the server bundle's own component,
 *  with ERROR_SLOT where the server writes the status and reason of an error
 *  page it makes without a render (server/render/document.rs). */
const ERROR_SLOT = "%ERROR%";
function errorScreenTemplate(ssr) {
  const html = ssr.__ssr_error_screen(ERROR_SLOT);
  if (!html.includes(ERROR_SLOT)) throw new Error("the error screen does not show its message");
  return html;
}

/** Social preview images (Open Graph, 1200x630 PNG), made here with the
 *  page's own title: one per page (its meta() title without route data, from
 *  the SSR bundle just built) and one per published blog post. content/images/og/... -> manifest
 *  images. */
function previewCards(assetsDir, images, rasters, ssr) {
  const ogDir = path.join(assetsDir, "images", "og");
  fs.mkdirSync(ogDir, { recursive: true });
  const fonts = path.join(root, "node_modules", "dejavu-fonts-ttf", "ttf");
  const ogPng = (title, kicker) => {
    const svg = ogSvg(title, kicker);
    return new Resvg(svg, {
      font: {
        loadSystemFonts: false,
        fontFiles: [path.join(fonts, "DejaVuSans.ttf"), path.join(fonts, "DejaVuSans-Bold.ttf")],
        defaultFontFamily: "DejaVu Sans",
      },
    }).render().asPng();
  };
  // Each card's alt text is the text drawn on it, whole (the card may cut a
  // long title short), the kicker once.
  const addOg = (name, title, kicker) => {
    const png = ogPng(title, kicker);
    const file = `${name}-${hash(png)}.png`;
    fs.writeFileSync(path.join(ogDir, file), png);
    images[`og/${name}.png`] = `/assets/images/og/${file}`;
    rasters[`og/${name}.png`] = { ...pngSize(png), alt: title.startsWith(kicker) ? title : `${kicker}: ${title}` };
  };
  const routeTable = JSON.parse(fs.readFileSync(path.join(root, "content", "routes.json"), "utf8")).routes;
  for (const page of new Set(routeTable.map((r) => r.page))) {
    addOg(page, ssr.__ssr_meta(page).title.replace(/ — Citizen Wallet.*$/, ""), "Citizen Wallet");
  }
  // The published posts, as the server's own front matter parser read them
  // (build.rs writes the file; drafts get no card).
  if (!process.env.SITE_POSTS) throw new Error("SITE_POSTS is not set: the release build is run by build.rs (cargo build)");
  for (const post of JSON.parse(fs.readFileSync(process.env.SITE_POSTS, "utf8"))) {
    addOg(`post-${post.id}`, post.title, `Citizen Wallet Blog · ${post.type}`);
  }
}

/** The watch build, driven by `citizen-site dev` through this process's
 *  stdio: each build goes to a new OUT/gen-N/ (the server reads it whole,
 *  never half-written), and one JSON line on stdout reports it:
 *    {"front": {"ok": true, "dir": ".../gen-3", "ms": 180}, "changed": [...]}
 *    {"front": {"ok": false, "errors": [{file, line, column, text, lineText}],
 *               "pages": ["Home"] | null (every page), "ms": 40}, "changed": [...]}
 *    {"front": null, "changed": ["content/blog/x.md"]}  (content only: the
 *                                                        server re-reads it)
 *  Files are watched with inotify (fs.watch) and each change triggers the
 *  esbuild contexts' incremental rebuild: esbuild's own watch mode polls and
 *  can take up to two seconds to notice a change. The process exits when
 *  stdin closes (the server is gone). */
async function watchBuild() {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  // esbuild writes nothing itself here; outputs are placed under each gen-N.
  const base = path.join(out, "current");
  const options = esbuildOptions(base, true);
  const contexts = { ssr: await esbuild.context(options.ssr), client: await esbuild.context(options.client) };
  const stylesheet = tailwind(false);
  let generation = 0;
  let lastSources = null;
  const report = (message) => process.stdout.write(JSON.stringify(message) + "\n");

  async function buildFront(changed) {
    const started = performance.now();
    try {
      const css = stylesheet(changed).catch((e) => {
        // Tailwind's errors name no file: they come from the stylesheet.
        throw { errors: [{ text: e.message ?? String(e), location: { file: "client/styles.css", line: null, column: -1 } }] };
      });
      const [ssr, client, cssText] = await Promise.all([contexts.ssr.rebuild(), contexts.client.rebuild(), css]);
      generation += 1;
      const dir = path.join(out, `gen-${generation}`);
      const assetsDir = path.join(dir, "assets");
      fs.mkdirSync(assetsDir, { recursive: true });
      for (const f of client.outputFiles) place(f, base, dir);
      for (const f of ssr.outputFiles.filter((f) => /[\\/]ssr\.js(\.map)?$/.test(f.path))) place(f, base, dir);
      const images = copyImages(assetsDir);
      const rasters = {};
      favicons(assetsDir, images, rasters);
      const { modules, sources } = modulesOf(client.metafile, base);
      lastSources = sources;
      const ssrCode = ssr.outputFiles.find((f) => /[\\/]ssr\.js$/.test(f.path)).text;
      const manifest = {
        ...modules,
        css: writeCss(assetsDir, cssText),
        images,
        rasters,
        files: listFiles(dir, assetsDir, false),
        errorScreen: errorScreenTemplate(ssrContext(ssrCode)),
      };
      fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest));
      // Keep the two builds before this one: a browser may still be loading
      // from them while it is told to reload.
      fs.rmSync(path.join(out, `gen-${generation - 3}`), { recursive: true, force: true });
      return { ok: true, dir, ms: Math.round(performance.now() - started) };
    } catch (err) {
      const errors = buildErrors(err);
      return { ok: false, errors, pages: brokenPages(errors, lastSources), ms: Math.round(performance.now() - started) };
    }
  }

  let pending = new Set();
  let running = false;
  let timer = null;
  // Sources by extension: editors' temporary files (sed's, vim's 4913) have other names.
  const source = /\.(tsx?|jsx?|mjs|css|json|md|svg|png|jpe?g|webp)$/;
  const frontFile = (rel) => source.test(rel) && (/^(client|ssr-bundle|content[\\/](site|images))[\\/]/.test(rel) || rel === path.join("content", "routes.json"));
  const contentFile = (rel) => /^content[\\/](blog[\\/][^\\/]+\.md|communities[\\/][^\\/]+\.json)$/.test(rel);
  async function run() {
    if (running) return;
    running = true;
    while (pending.size > 0) {
      const changed = [...pending].sort();
      pending = new Set();
      const front = changed.some(frontFile) ? await buildFront(changed) : null;
      report({ front, changed });
    }
    running = false;
  }
  for (const dir of ["client", "ssr-bundle", "content"]) {
    watchTree(path.join(root, dir), (file) => {
      const rel = path.relative(root, file);
      // Editors' lock and swap files (.#Home.tsx, .Home.tsx.swp) are not sources.
      if (path.basename(rel).startsWith(".") || (!frontFile(rel) && !contentFile(rel))) return;
      pending.add(rel.split(path.sep).join("/"));
      // Editors save in steps (truncate, write, rename): build once they are done.
      clearTimeout(timer);
      timer = setTimeout(run, 15);
    });
  }
  // Ctrl-C in the terminal reaches this process too: the server stops it
  // (or its stdin closes) once the server itself is done.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
  report({ front: await buildFront(null), changed: [] });
}

/** Calls `onChange(path)` for every file created, changed, renamed or
 *  removed under `top`, folders made later included. One inotify watch per
 *  folder: Node's recursive fs.watch on Linux watches each file and loses a
 *  file that an editor replaces by renaming a new one over it. */
function watchTree(top, onChange) {
  const watching = new Set();
  const add = (dir) => {
    if (watching.has(dir)) return;
    let watcher;
    try {
      watcher = fs.watch(dir, (_event, name) => {
        if (!name) return;
        const file = path.join(dir, name.toString());
        if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) add(file);
        else onChange(file);
      });
    } catch {
      return; // gone already
    }
    watching.add(dir);
    watcher.on("error", () => {
      watcher.close();
      watching.delete(dir);
    });
    for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
      if (ent.isDirectory()) add(path.join(dir, ent.name));
    }
  };
  add(top);
}

/** Moves an esbuild output planned under `base` to the same place under
 *  `dir`. A source map's sources are made relative to the checkout, as the
 *  server reports them (`client/pages/Home.tsx`). */
function place(file, base, dir) {
  const dest = path.join(dir, path.relative(base, file.path));
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  if (dest.endsWith(".map")) {
    const map = JSON.parse(file.text);
    map.sources = map.sources.map((s) => path.relative(root, path.resolve(path.dirname(file.path), s)).split(path.sep).join("/"));
    fs.writeFileSync(dest, JSON.stringify(map));
  } else {
    fs.writeFileSync(dest, file.contents);
  }
}

/** esbuild's or Tailwind's failure as a list of located messages, each once
 *  (the server and client builds report the same syntax error). */
function buildErrors(err) {
  const seen = new Set();
  const list = (err.errors ?? [{ text: err.message ?? String(err) }]).map((e) => ({
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

/** The pages the last good build says each broken file is part of; null
 *  (every page) when a file is shared by all, new, or only in the server
 *  bundle. */
function brokenPages(errors, sources) {
  if (!sources) return null;
  const pages = new Set();
  for (const { file } of errors) {
    if (!file || sources.shared.includes(file)) return null;
    const hit = Object.entries(sources.pages).filter(([, inputs]) => inputs.includes(file)).map(([page]) => page);
    if (hit.length === 0) return null;
    hit.forEach((p) => pages.add(p));
  }
  return [...pages].sort();
}

/** The preview card: brand colour, the coin mark, a kicker and the title
 *  wrapped to at most three lines. */
function ogSvg(title, kicker) {
  const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const lines = [];
  for (const word of title.split(/\s+/)) {
    const last = lines[lines.length - 1];
    if (last && `${last} ${word}`.length <= 24) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const shown = lines.slice(0, 3);
  if (lines.length > 3) shown[2] = `${shown[2]}…`;
  const text = shown.map((l, i) => `<text x="80" y="${300 + i * 84}" font-size="68" font-weight="bold" fill="#fff">${esc(l)}</text>`).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630" viewBox="0 0 1200 630">` +
    `<rect width="1200" height="630" fill="#1f5ad6"/><rect y="590" width="1200" height="40" fill="#1a47a8"/>` +
    `<circle cx="110" cy="130" r="42" fill="none" stroke="#fff" stroke-width="7"/>` +
    `<circle cx="110" cy="112" r="8" fill="#fff"/><circle cx="94" cy="142" r="8" fill="#fff"/><circle cx="126" cy="142" r="8" fill="#fff"/>` +
    `<text x="175" y="145" font-size="40" fill="#dbe7ff">${esc(kicker)}</text>${text}</svg>`;
}

function hash(buf) {
  return createHash("sha256").update(buf).digest("base64url").slice(0, 10);
}
function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) yield* walk(p);
    else if (!p.endsWith(".br") && !p.endsWith(".gz")) yield p;
  }
}

if (watch) await watchBuild();
else await releaseBuild();
