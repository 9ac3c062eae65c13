// Raster images (JPEG, PNG, WebP, AVIF under content/images/), processed
// once by sharp (libvips): checked, turned upright by their EXIF
// orientation, stripped of every piece of metadata, and encoded as AVIF,
// WebP and their own format at the widths the layouts show
// (client/components/picture-layouts.json), never wider than the image.
// The original is never served.
//
// Each image's variants are kept in a cache folder git ignores
// (.cache/images/ in the checkout), keyed by the source's SHA-256 and the
// settings below: a build, a `pack` or a `dev` reload reads them there and
// links them into its output, so only a new or changed photo costs time
// (and says so on stderr, with its time).
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { hash, root } from "./files.mjs";

/** The largest image accepted, in pixels (sharp's own default: 16383 x
 *  16383, about 268 megapixels; every phone camera is under it). A file
 *  claiming more is refused before it is decoded (a decompression bomb). */
const MAX_PIXELS = 0x3fff * 0x3fff;
/** The longest side a variant may have: WebP's limit (AVIF's is 16384). */
const MAX_SIDE = 0x3fff;

/** What each format is encoded with. AVIF at effort 2: about 8 % larger than
 *  sharp's default effort 4, in a sixth of the time (a 3000 x 2000 photo). */
const ENCODE = {
  avif: { quality: 50, effort: 2 },
  webp: { quality: 75, effort: 4 },
  jpeg: { quality: 75, mozjpeg: true },
  png: { compressionLevel: 9, adaptiveFiltering: true },
};
/** The formats served, best first; the image's own format is the last
 *  fallback (`<img srcset>`), or, when it is one of these, only listed once. */
const MODERN = ["avif", "webp"];
const MIME = { avif: "image/avif", webp: "image/webp", jpeg: "image/jpeg", png: "image/png" };
const EXT = { avif: "avif", webp: "webp", jpeg: "jpg", png: "png" };
/** A file's format by its name, and by its first bytes. */
const BY_EXTENSION = { ".jpg": "jpeg", ".jpeg": "jpeg", ".png": "png", ".webp": "webp", ".avif": "avif" };
export const RASTER = new RegExp(`\\.(${Object.keys(BY_EXTENSION).map((e) => e.slice(1)).join("|")})$`, "i");

/** The widths of every layout, at 1x and 2x, ascending. */
export function layoutWidths() {
  const layouts = JSON.parse(fs.readFileSync(path.join(root, "client", "components", "picture-layouts.json"), "utf8"));
  const widths = new Set();
  for (const [name, layout] of Object.entries(layouts)) {
    if (name !== "//") layout.widths.forEach((w) => widths.add(w));
  }
  return [...widths].sort((a, b) => a - b);
}

/** Changes to this file's processing that change its output: bump it. */
const PROCESSING_VERSION = 2;
function settingsKey(widths) {
  return JSON.stringify({ PROCESSING_VERSION, widths, ENCODE, sharp: sharp.versions.sharp, vips: sharp.versions.vips });
}

/** A refusal a maintainer can act on: the file and what is wrong with it. */
export class ImageError extends Error {
  constructor(file, reason) {
    super(`${file}: ${reason}`);
    this.file = file;
    this.reason = reason;
  }
}

/** The format the bytes are, from their signature, or null. */
function sniff(bytes) {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (bytes.length >= 12 && bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP") return "webp";
  if (bytes.length >= 16 && bytes.toString("latin1", 4, 8) === "ftyp") {
    const box = Math.min(bytes.readUInt32BE(0), bytes.length);
    const brands = [];
    for (let at = 8; at + 4 <= box; at += 4) if (at !== 12) brands.push(bytes.toString("latin1", at, at + 4));
    if (brands.includes("avif") || brands.includes("avis")) return "avif";
    return "heif";
  }
  if (bytes.length >= 6 && ["GIF87a", "GIF89a"].includes(bytes.toString("latin1", 0, 6))) return "gif";
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/.test(bytes.toString("utf8", 0, 4096))) return "svg";
  return null;
}

const NAMES = { jpeg: "a JPEG", png: "a PNG", webp: "a WebP", avif: "an AVIF", heif: "a HEIF (HEIC)", gif: "a GIF", svg: "an SVG" };

/** The checks made before anything is decoded: not empty, the format its
 *  name says, a size that can be decoded. Returns sharp's metadata. */
async function admit(file, bytes) {
  const ext = path.extname(file).toLowerCase();
  const named = BY_EXTENSION[ext];
  if (bytes.length === 0) throw new ImageError(file, "the file is empty (0 bytes): copy the image again");
  const is = sniff(bytes);
  if (is !== named) {
    const what = is ? `${NAMES[is]} file` : "not an image sharp can read (no JPEG, PNG, WebP or AVIF signature)";
    // An SVG is served as it is: it only needs its own name.
    const right = { ...EXT, svg: "svg" }[is];
    const fix = right ? `: rename it to ${path.basename(file, path.extname(file))}.${right}` : is ? ": save it as JPEG, PNG, WebP or AVIF" : "";
    throw new ImageError(file, `named ${ext} but is ${what}${fix}`);
  }
  let meta;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (e) {
    throw new ImageError(file, `cannot be read as ${NAMES[is]}: ${reason(e)}; open it in an image editor and save it again`);
  }
  const pixels = meta.width * meta.height;
  if (!(pixels > 0)) throw new ImageError(file, `has no size (${meta.width} x ${meta.height})`);
  if (pixels > MAX_PIXELS) {
    throw new ImageError(file, `claims ${meta.width} x ${meta.height} pixels (${Math.round(pixels / 1e6)} megapixels), more than the ${Math.round(MAX_PIXELS / 1e6)} megapixels an image may have: resize it before adding it`);
  }
  return meta;
}

function reason(e) {
  return String(e?.message ?? e).split("\n")[0].replace(/^Input (buffer|file) /, "");
}

/** The whole image decoded once (corrupt or truncated data fails here),
 *  upright, in 8-bit sRGB, as raw pixels. */
async function decode(file, bytes, meta) {
  try {
    return await sharp(bytes, { failOn: "warning", limitInputPixels: MAX_PIXELS })
      .autoOrient()
      .toColourspace("srgb")
      .raw({ depth: "uchar" })
      .toBuffer({ resolveWithObject: true });
  } catch (e) {
    throw new ImageError(file, `is damaged or cut short (${NAMES[BY_EXTENSION[path.extname(file).toLowerCase()]]}, ${meta.width} x ${meta.height}): ${reason(e)}; copy it again from the original`);
  }
}

/** One image's variants, made now: { width, height, placeholder, variants:
 *  [{ format, width, height, file, bytes, hash }] } with the files in `dir`. */
async function makeVariants(file, bytes, widths, dir) {
  const meta = await admit(file, bytes);
  const { data, info } = await decode(file, bytes, meta);
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  const own = BY_EXTENSION[path.extname(file).toLowerCase()];
  const formats = [...MODERN, ...(MODERN.includes(own) ? [] : [own])];
  // The layouts' widths the image has, and its own width when it is
  // narrower than the widest: never wider than the image.
  const sizes = widths.filter((w) => w <= info.width);
  if (info.width < widths[widths.length - 1] && !sizes.includes(info.width)) sizes.push(info.width);
  const variants = [];
  for (const format of formats) {
    for (const width of sizes) {
      // A very tall image (a long screenshot) is made narrower than asked
      // rather than taller than AVIF and WebP can hold.
      const out = await sharp(data, raw)
        .resize({ width, height: MAX_SIDE, fit: "inside", withoutEnlargement: true })
        [format](ENCODE[format])
        .toBuffer({ resolveWithObject: true });
      if (variants.some((v) => v.format === format && v.width === out.info.width)) continue;
      const name = `w${out.info.width}.${EXT[format]}`;
      writeDurably(path.join(dir, name), out.data);
      variants.push({ format, width: out.info.width, height: out.info.height, file: name, bytes: out.data.length, hash: hash(out.data) });
    }
  }
  // A blurred preview the size of a stamp, painted behind the image while
  // it loads (opaque images only: it would show through a transparent one).
  let placeholder = null;
  const { isOpaque } = await sharp(data, raw).stats();
  if (isOpaque) {
    const tiny = await sharp(data, raw).resize(16, 16, { fit: "inside" }).webp({ quality: 40 }).toBuffer();
    placeholder = `data:image/webp;base64,${tiny.toString("base64")}`;
  }
  return { width: info.width, height: info.height, placeholder, variants };
}

/** The share preview of a post whose cover is a photo: 1200 x 630 JPEG,
 *  cropped around what draws the eye. */
async function makeCard(file, bytes, dir) {
  const meta = await admit(file, bytes);
  const { data, info } = await decode(file, bytes, meta);
  const out = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .flatten({ background: "#ffffff" })
    .resize(1200, 630, { fit: "cover", position: sharp.strategy.attention })
    .jpeg({ quality: 82, mozjpeg: true })
    .toBuffer();
  writeDurably(path.join(dir, "card.jpg"), out);
  return { width: 1200, height: 630, file: "card.jpg", bytes: out.length, hash: hash(out) };
}

/** The processing cache: made once per process, kept on disk. Several
 *  builds may share its folder at once (two packs, a pack beside `dev`):
 *  an entry is made in a folder of its own and renamed into place whole,
 *  and one that is there already is used, never replaced while another
 *  build may be reading it. An entry is used only when every file it lists
 *  has the size it recorded. A folder that cannot be written (a read-only
 *  checkout) is read, and new entries go to a temporary folder. */
export class PhotoCache {
  constructor(dir = path.join(root, ".cache", "images"), log = (line) => process.stderr.write(line + "\n")) {
    this.dir = dir;
    this.log = log;
    /** Where new entries go: `dir`, or a temporary folder if `dir` cannot be written. */
    this.writable = null;
    this.memory = new Map();
    /** A source file's entry by its path, size, inode and change time:
     *  `dev` rebuilds without reading and hashing every photo again. */
    this.byFile = new Map();
  }

  /** `make(file, bytes, dir)` once per source and settings: the entry from
   *  memory, else from the cache folder, else made now (and reported). */
  async entry(kind, file, bytes, settings, make) {
    const key = createHash("sha256").update(bytes).update(`\0${kind}\0${settings}`).digest("hex").slice(0, 40);
    const known = this.memory.get(key);
    // Still there (a `dev` outlives a cache folder removed under it).
    if (known && intact(known.dir, known)) return known;
    for (const dir of new Set([path.join(this.dir, key), this.writable && path.join(this.writable, key)])) {
      const entry = dir && intact(dir);
      if (entry) {
        touch(path.join(dir, "meta.json"));
        return this.keep(key, dir, entry);
      }
    }
    const started = performance.now();
    const into = this.newEntries();
    const work = fs.mkdtempSync(path.join(into, `.new-${key.slice(0, 8)}-`));
    let entry;
    const dir = path.join(into, key);
    try {
      const made = await make(file, bytes, work);
      entry = { ...made, files: (kind === "card" ? [made] : made.variants).map((v) => ({ name: v.file, bytes: v.bytes })) };
      writeDurably(path.join(work, "meta.json"), JSON.stringify(entry));
      try {
        fs.renameSync(work, dir);
      } catch (e) {
        // Made meanwhile by another build: theirs is used, ours dropped.
        const theirs = intact(dir);
        if (!theirs) {
          // A broken one: set aside (another build may still be reading
          // it), ours put in its place.
          const aside = `${dir}.old-${process.pid}-${Date.now()}`;
          try {
            fs.renameSync(dir, aside);
          } catch (moved) {
            if (moved.code !== "ENOENT") throw e;
          }
          fs.renameSync(work, dir);
          fs.rmSync(aside, { recursive: true, force: true });
        } else {
          entry = theirs;
        }
      }
    } catch (e) {
      throw e instanceof ImageError ? e : new ImageError(file, `could not be processed: ${reason(e)}`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    const seconds = (performance.now() - started) / 1000;
    const made = kind === "card" ? [entry] : entry.variants;
    const kb = made.reduce((n, v) => n + v.bytes, 0) / 1024;
    this.log(
      kind === "card"
        ? `processed ${file}: its share preview (1200 x 630 JPEG, ${kb.toFixed(0)} KB) in ${seconds.toFixed(1)} s`
        : `processed ${file} (${entry.width} x ${entry.height}): ${made.length} variants, ${kb.toFixed(0)} KB, in ${seconds.toFixed(1)} s`,
    );
    return this.keep(key, dir, entry);
  }

  keep(key, dir, entry) {
    entry.dir = dir;
    this.memory.set(key, entry);
    return entry;
  }

  /** The folder new entries are made in: the cache's, else (a read-only
   *  checkout, a folder of another user's) a temporary one, said once. */
  newEntries() {
    if (!this.writable) {
      try {
        fs.mkdirSync(this.dir, { recursive: true });
        fs.accessSync(this.dir, fs.constants.W_OK);
        this.writable = this.dir;
      } catch (e) {
        this.writable = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-site-images-"));
        this.log(`the image cache ${this.dir} cannot be written (${reason(e)}): photos are processed in ${this.writable} for this build only`);
      }
    }
    // Made again if it went meanwhile (removed under a running `dev`).
    fs.mkdirSync(this.writable, { recursive: true });
    return this.writable;
  }

  /** The variants of the raster image at `source`, named `file` (relative
   *  to the checkout) in what it says. */
  async variants(source, file, widths) {
    const stat = fs.statSync(source);
    const seen = `${source}\0${stat.size}\0${stat.ino}\0${stat.mtimeMs}\0${stat.ctimeMs}\0${widths}`;
    const known = this.byFile.get(seen);
    if (known && intact(known.dir, known)) return known;
    const bytes = fs.readFileSync(source);
    const entry = await this.entry("variants", file, bytes, settingsKey(widths), (f, b, dir) => makeVariants(f, b, widths, dir));
    this.byFile.set(seen, entry);
    return entry;
  }

  /** The 1200 x 630 share preview of the photo `file`. */
  card(file, bytes) {
    return this.entry("card", file, bytes, settingsKey([1200]), makeCard);
  }

  /** Removes what no build has used for `days` days, and what a build
   *  killed midway left. Housekeeping: a folder it may not change, or a
   *  file that is not an entry, is left as it is. */
  prune(days = 30) {
    const before = Date.now() - days * 86400_000;
    let names = [];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(this.dir, name);
      try {
        if (!fs.statSync(dir).isDirectory()) continue;
        const stat = fs.statSync(path.join(dir, "meta.json"), { throwIfNoEntry: false });
        const leftover = /^\.new-|\.old-/.test(name) && fs.statSync(dir).mtimeMs < Date.now() - 3600_000;
        if ((stat && stat.mtimeMs < before) || leftover) fs.rmSync(dir, { recursive: true, force: true });
      } catch {
        // Not ours to remove.
      }
    }
  }
}

/** The entry in `dir` (or `entry`, known to be from there) when every file
 *  it lists is there with the size it recorded; null otherwise. */
function intact(dir, entry = readJson(path.join(dir, "meta.json"))) {
  if (!entry || !Array.isArray(entry.files) || entry.files.length === 0) return null;
  const whole = entry.files.every((f) => fs.statSync(path.join(dir, String(f?.name)), { throwIfNoEntry: false })?.size === f.bytes);
  return whole ? entry : null;
}

/** Marks an entry used now (what a clean-up keeps); a read-only cache
 *  still serves. */
function touch(file) {
  const now = new Date();
  try {
    fs.utimesSync(file, now, now);
  } catch {
    // Read-only: used as it is.
  }
}

/** Writes `data` at `file` and flushes it to the disk, so an entry renamed
 *  into place after a crash is never a file the disk has not got. */
function writeDurably(file, data) {
  const fd = fs.openSync(file, "w");
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** Puts `from` at `to`: a hard link where the file system allows it (the
 *  cache's files are never written again), else a copy. */
export function linkOrCopy(from, to) {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

/** The image as pages show it (server/assets.rs `SiteImage`): its
 *  fallback, its true size, each format's srcset (best first, its own
 *  format last) and its placeholder's CSS class. `url(variant)` places a
 *  variant in the build's output and returns its URL. */
export function siteImage(entry, url) {
  const formats = [...new Set(entry.variants.map((v) => v.format))];
  const sources = formats.map((format) => ({
    type: MIME[format],
    srcset: entry.variants
      .filter((v) => v.format === format)
      .map((v) => `${url(v)} ${v.width}w`)
      .join(", "),
  }));
  const fallback = entry.variants.filter((v) => v.format === formats[formats.length - 1]);
  const image = { src: url(fallback[fallback.length - 1]), width: entry.width, height: entry.height, sources };
  if (entry.placeholder) image.placeholder = placeholderClass(entry.placeholder);
  return image;
}

function placeholderClass(dataUri) {
  return `ph-${hash(Buffer.from(dataUri))}`;
}

/** The stylesheet rule that paints a placeholder behind its image. */
export function placeholderRule(dataUri) {
  return `.${placeholderClass(dataUri)}{background:url("${dataUri}") 50%/cover no-repeat}`;
}
