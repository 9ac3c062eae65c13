// Images: the content images copied with hashed names, the favicon set and
// the preview cards, drawn with resvg.
import fs from "node:fs";
import path from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { hash, pngSize, root, walk } from "./files.mjs";

/** content/images/DIR/NAME.EXT is served as /assets/images/DIR/NAME-HASH.EXT,
 *  immutable like the scripts; returns each path's URL (logos and blog images
 *  are linked by the Rust loaders through the manifest). */
export function copyImages(assetsDir) {
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

/** Social preview images (Open Graph, 1200x630 PNG), made here with the
 *  page's own title: one per page (its meta() title without route data, from
 *  the SSR bundle just built) and one per published blog post. content/images/og/... -> manifest
 *  images. */
export function previewCards(assetsDir, images, rasters, ssr) {
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
