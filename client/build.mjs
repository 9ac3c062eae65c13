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
import zlib from "node:zlib";

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
