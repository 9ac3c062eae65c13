// Files of a build: the checkout's root, content hashes, the served types,
// the listing of every output (with its precompressed .br and .gz bodies in
// the release build) and the placing of esbuild's in-memory outputs.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");

const TYPES = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".avif": "image/avif",
  ".gif": "image/gif",
  ".json": "application/json",
  ".ico": "image/x-icon",
};

/** Every file under `assetsDir` for the manifest (and build.rs). */
export function listFiles(base, assetsDir, compressed) {
  const files = [];
  for (const file of walk(assetsDir)) {
    const ext = path.extname(file);
    if (ext === ".map" && compressed) continue;
    const type = TYPES[ext] ?? "application/octet-stream";
    // Compressed formats gain nothing from brotli or gzip.
    const compressible = compressed && !/^image\/(png|jpeg|webp|avif|gif)$/.test(type);
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

/** Moves an esbuild output planned under `base` to the same place under
 *  `dir`. A source map's sources are made relative to the checkout, as the
 *  server reports them (`client/features/home/Home.tsx`). */
export function place(file, base, dir) {
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

/** Width and height of a PNG, from its header (what the image really is,
 *  not what it was asked to be). */
export function pngSize(png) {
  if (png.subarray(12, 16).toString("latin1") !== "IHDR") throw new Error("not a PNG");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export function hash(buf) {
  return createHash("sha256").update(buf).digest("base64url").slice(0, 10);
}
export function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) yield* walk(p);
    else if (!p.endsWith(".br") && !p.endsWith(".gz")) yield p;
  }
}
