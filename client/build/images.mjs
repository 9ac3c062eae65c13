// Images: the content images (SVGs copied with hashed names, raster images
// processed by photos.mjs), the favicon set and the preview cards, drawn
// with resvg, or made from a post's cover photo.
import fs from "node:fs";
import path from "node:path";
import { Resvg } from "@resvg/resvg-js";
import sharp from "sharp";
import { hash, pngSize, root, walk } from "./files.mjs";
import { ImageError, RASTER, layoutWidths, linkOrCopy, placeholderRule, siteImage } from "./photos.mjs";

/** Every file under content/images/, as the pages get it:
 *  - an SVG is served as it is, as /assets/images/DIR/NAME-HASH.svg;
 *  - a raster image (JPEG, PNG, WebP, AVIF) is processed (photos.mjs) and
 *    each variant served as /assets/images/DIR/NAME-WIDTH-HASH.EXT.
 *  Returns `images` (each path's URL: an SVG's, or a raster's largest
 *  fallback), `pictures` (each path's true size and variants, the
 *  `SiteImage` of server/assets.rs) and the placeholders' stylesheet rules. */
export async function processImages(assetsDir, cache) {
  const images = {};
  const pictures = {};
  const rules = [];
  const imagesSrc = path.join(root, "content", "images");
  const widths = layoutWidths();
  const refused = [];
  for (const file of [...walk(imagesSrc)].sort()) {
    const rel = path.relative(imagesSrc, file).split(path.sep).join("/");
    // An editor's or a system's own files (.DS_Store, .#draft) are not content.
    if (rel.split("/").some((part) => part.startsWith("."))) continue;
    const shown = `content/images/${rel}`;
    const ext = path.extname(rel);
    // Served under a name a URL carries as it is ("IMG 1234.jpg" is
    // IMG-1234-...): the manifest's key stays the file's own name.
    const stem = rel.slice(0, -ext.length).replace(/[^A-Za-z0-9._/-]/g, "-");
    const copy = () => {
      const body = fs.readFileSync(file);
      const hashedRel = `${stem}-${hash(body)}${ext.toLowerCase()}`;
      const dest = path.join(assetsDir, "images", hashedRel);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, body);
      images[rel] = `/assets/images/${hashedRel}`;
      return body;
    };
    if (UNSERVED.test(rel)) {
      refused.push(new ImageError(shown, `${UNSERVED.exec(rel)[1].toUpperCase()} is not a format browsers show: save it as JPEG, PNG, WebP or AVIF`));
      continue;
    }
    if (!RASTER.test(rel)) {
      // An SVG or a GIF is served as it is, with its size; any other file
      // is copied as before.
      const body = copy();
      try {
        if (/\.svg$/i.test(ext)) pictures[rel] = { src: images[rel], ...svgSize(body) };
        else if (/\.gif$/i.test(ext)) pictures[rel] = { src: images[rel], ...(await gifSize(body)) };
      } catch (e) {
        refused.push(new ImageError(shown, e.message));
      }
      continue;
    }
    let entry;
    try {
      entry = await cache.variants(file, shown, widths);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      refused.push(e);
      continue;
    }
    const place = (variant) => {
      const hashedRel = `${stem}-${variant.width}-${variant.hash}.${variant.file.split(".").pop()}`;
      const dest = path.join(assetsDir, "images", hashedRel);
      if (!fs.existsSync(dest)) {
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        linkOrCopy(path.join(entry.dir, variant.file), dest);
      }
      return `/assets/images/${hashedRel}`;
    };
    pictures[rel] = siteImage(entry, place);
    images[rel] = pictures[rel].src;
    if (entry.placeholder) rules.push(placeholderRule(entry.placeholder));
  }
  // Every refusal at once, as `pack` and `dev` say them.
  if (refused.length > 0) throw new ImagesRefused(refused);
  return { images, pictures, css: [...new Set(rules)].join("") };
}

/** Image formats a camera or an editor may give that browsers do not show. */
const UNSERVED = /\.(heic|heif|tiff?|bmp|psd|raw|dng|cr2|nef|arw)$/i;

/** A GIF's size, from its header (sharp reads it without decoding). */
async function gifSize(body) {
  const { width, height } = await sharp(body).metadata();
  if (!(width > 0 && height > 0)) throw new Error("a GIF without a size");
  return { width, height };
}

/** One or more images the build refuses, each named with its reason. */
export class ImagesRefused extends Error {
  constructor(errors) {
    super(errors.map((e) => e.message).join("\n"));
    this.errors = errors;
  }
}

/** An SVG's size in CSS pixels: its width and height, else its viewBox's. */
function svgSize(body) {
  const tag = body.toString("utf8").match(/<svg\b[^>]*>/)?.[0];
  if (!tag) throw new Error("an .svg file without an <svg> element");
  const attr = (name) => tag.match(new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`))?.[1];
  const px = (v) => (v && /^\s*[\d.]+\s*(px)?\s*$/.test(v) ? Math.round(parseFloat(v)) : null);
  let width = px(attr("width"));
  let height = px(attr("height"));
  const box = attr("viewBox")?.trim().split(/[\s,]+/).map(Number);
  if ((!width || !height) && box?.length === 4 && box[2] > 0 && box[3] > 0) {
    if (width) height = Math.round((width * box[3]) / box[2]);
    else if (height) width = Math.round((height * box[2]) / box[3]);
    else [width, height] = [Math.round(box[2]), Math.round(box[3])];
  }
  if (!width || !height) throw new Error("the SVG says no size: give its <svg> a viewBox (or a width and height in pixels)");
  return { width, height };
}

/** The favicon set: PNG renderings of content/images/favicon.svg for browsers
 *  and home screens that do not take SVG icons. Drawn once per version of the
 *  SVG (a watch build reuses them). */
const faviconCache = new Map();
export function favicons(assetsDir, images, rasters) {
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

/** Social preview images (Open Graph, 1200x630), made here: one per page,
 *  a PNG drawn with its own title (its meta() title without route data,
 *  from the SSR bundle just built), and one per published blog post: a
 *  JPEG cropped from its cover when that is a photo (og/post-ID.jpg), else
 *  a drawn card. og/... -> manifest images. */
export async function previewCards(assetsDir, images, pictures, rasters, ssr, cache) {
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
    // A cover the build processed as a photo (one the server would refuse,
    // named outside content/images/, is not one).
    const cover = post.image && RASTER.test(post.image) && pictures[post.image] ? path.join(root, "content", "images", post.image) : null;
    if (cover) {
      const card = await cache.card(`content/images/${post.image}`, fs.readFileSync(cover));
      const file = `post-${post.id}-${card.hash}.jpg`;
      linkOrCopy(path.join(card.dir, card.file), path.join(ogDir, file));
      images[`og/post-${post.id}.jpg`] = `/assets/images/og/${file}`;
      rasters[`og/post-${post.id}.jpg`] = { width: card.width, height: card.height, alt: `Cover photo of “${post.title}”` };
    } else {
      addOg(`post-${post.id}`, post.title, `Citizen Wallet Blog · ${post.type}`);
    }
  }
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
