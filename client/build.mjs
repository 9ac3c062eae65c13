// The one front-end build: run by build.rs (or `npm run build`) with the output
// directory as its only argument. It emits
//   ssr.js          the server bundle (IIFE, evaluated once per V8 isolate)
//   assets/*        hashed client ES modules (one chunk per page), the CSS,
//                   static images; each with .br and .gz siblings
//   manifest.json   what the Rust server needs: entry, CSS, per-page chunks
//                   with their static imports, and the list of embedded files
import * as esbuild from "esbuild";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import zlib from "node:zlib";
import { Resvg } from "@resvg/resvg-js";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const out = path.resolve(process.argv[2] ?? path.join(root, "target", "web"));
const assetsDir = path.join(out, "assets");
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(assetsDir, { recursive: true });

const shared = {
  bundle: true,
  minify: true,
  legalComments: "none",
  jsx: "automatic",
  target: "es2022",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
  absWorkingDir: root,
  // Images imported from TSX become hashed files under /assets/.
  loader: { ".svg": "file", ".png": "file", ".jpg": "file", ".webp": "file" },
  assetNames: "[name]-[hash]",
  publicPath: "/assets",
};

// 1. The server bundle: one classic script that defines globalThis.__ssr_render.
await esbuild.build({
  ...shared,
  entryPoints: ["ssr-bundle/entry-server.tsx"],
  outfile: path.join(out, "ssr.js"),
  format: "iife",
  platform: "neutral",
  mainFields: ["module", "main"],
  conditions: ["worker", "browser"],
});

// 2. The client: ES modules, code-split so each page is its own chunk.
const client = await esbuild.build({
  ...shared,
  entryPoints: { entry: "client/entry-client.tsx" },
  outdir: assetsDir,
  format: "esm",
  splitting: true,
  platform: "browser",
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  metafile: true,
});

// 3. The CSS, by Tailwind's CLI, then content-hashed like the scripts.
const tailwind = path.join(root, "node_modules", "@tailwindcss", "cli", "dist", "index.mjs");
const cssTmp = path.join(out, "app.css");
execFileSync(process.execPath, [tailwind, "-i", "client/styles.css", "-o", cssTmp, "--minify"], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
});
const css = fs.readFileSync(cssTmp);
const cssName = `app-${hash(css)}.css`;
fs.renameSync(cssTmp, path.join(assetsDir, cssName));

// 4. Images under content/images/ (favicon, community logos, blog images):
// content/images/DIR/NAME.EXT is served as /assets/images/DIR/NAME-HASH.EXT,
// immutable like the scripts; the manifest maps each path to its URL so the
// server can link them (logos and blog images come from Rust loaders).
const images = {};
const imagesSrc = path.join(root, "content", "images");
if (fs.existsSync(imagesSrc)) {
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
}

// 4b. Social preview images (Open Graph, 1200x630 PNG), made here with the
// page's own title: one per page (its meta() title, from the SSR bundle just
// built) and one per blog post. content/images/og/... -> manifest images.
const ogDir = path.join(assetsDir, "images", "og");
fs.mkdirSync(ogDir, { recursive: true });
const ogContext = vm.createContext({ console });
vm.runInContext(fs.readFileSync(path.join(out, "ssr.js"), "utf8"), ogContext, { filename: "ssr.js" });
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
const addOg = (name, png) => {
  const file = `${name}-${hash(png)}.png`;
  fs.writeFileSync(path.join(ogDir, file), png);
  images[`og/${name}.png`] = `/assets/images/og/${file}`;
};
const routeTable = JSON.parse(fs.readFileSync(path.join(root, "content", "routes.json"), "utf8")).routes;
for (const page of new Set(routeTable.map((r) => r.page))) {
  const rendered = ogContext.__ssr_render("/", JSON.stringify({ page, status: 200, data: {} }));
  addOg(page, ogPng(rendered.title.replace(/ — Citizen Wallet.*$/, ""), "Citizen Wallet"));
}
for (const file of fs.readdirSync(path.join(root, "content", "blog")).filter((f) => f.endsWith(".md"))) {
  const front = fs.readFileSync(path.join(root, "content", "blog", file), "utf8").split("+++")[1] ?? "";
  const field = (k) => front.match(new RegExp(`^${k}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`, "m"))?.[1]?.replace(/\\"/g, '"') ?? "";
  addOg(`post-${file.replace(/\.md$/, "")}`, ogPng(field("title"), `Citizen Wallet Blog · ${field("type")}`));
}

// 4c. The favicon set: PNG renderings of content/images/favicon.svg for
// browsers and home screens that do not take SVG icons.
const faviconSvg = fs.readFileSync(path.join(root, "content", "images", "favicon.svg"));
for (const size of [32, 180, 192, 512]) {
  const png = new Resvg(faviconSvg, { fitTo: { mode: "width", value: size } }).render().asPng();
  const file = `icon-${size}-${hash(png)}.png`;
  fs.writeFileSync(path.join(assetsDir, "images", file), png);
  images[`icon-${size}.png`] = `/assets/images/${file}`;
}

// 5. Manifest: per page, its chunk plus every chunk it imports statically, so the
// server can modulepreload exactly what a route needs.
const outputs = client.metafile.outputs;
const urlOf = (file) => "/" + path.relative(out, path.resolve(root, file)).split(path.sep).join("/");
const staticClosure = (file, seen = new Set()) => {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const imp of outputs[file].imports) {
    if (imp.kind === "import-statement" && outputs[imp.path]) staticClosure(imp.path, seen);
  }
  return seen;
};
let entry = null;
const pages = {};
for (const [file, meta] of Object.entries(outputs)) {
  if (!file.endsWith(".js") || !meta.entryPoint) continue;
  if (meta.entryPoint === "client/entry-client.tsx") {
    entry = file;
  } else if (meta.entryPoint.startsWith("client/pages/")) {
    const page = path.basename(meta.entryPoint).replace(/\.tsx?$/, "");
    pages[page] = [...staticClosure(file)].map(urlOf);
  }
}
if (!entry) throw new Error("esbuild produced no client entry");

// 6. Precompress every embedded asset; list them for build.rs.
const types = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".json": "application/json",
  ".ico": "image/x-icon",
};
const files = [];
for (const file of walk(assetsDir)) {
  if (file.endsWith(".map")) continue;
  const ext = path.extname(file);
  const type = types[ext] ?? "application/octet-stream";
  const body = fs.readFileSync(file);
  const compressible = !/^image\/(png|jpeg|webp)$/.test(type);
  if (compressible) {
    fs.writeFileSync(file + ".br", zlib.brotliCompressSync(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }));
    fs.writeFileSync(file + ".gz", zlib.gzipSync(body, { level: 9 }));
  }
  files.push({ url: urlOf(file), file: path.relative(out, file), type, compressed: compressible });
}

const entryClosure = [...staticClosure(entry)].map(urlOf);
fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify({
  entry: urlOf(entry),
  entryImports: entryClosure.slice(1),
  css: `/assets/${cssName}`,
  pages,
  images,
  files,
}, null, 2));

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
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) yield* walk(p);
    else if (!p.endsWith(".br") && !p.endsWith(".gz")) yield p;
  }
}
