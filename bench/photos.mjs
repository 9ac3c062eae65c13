// Photos: what processing them (client/build/photos.mjs) changed for a
// visitor and costs a publish. A maintainer's photo post
// (tests/support/photos.mjs: a 3000 x 2000 camera JPEG cover, a 1600 x
// 1000 PNG and an upright portrait, post `market-day`) is written once and
// copied into a copy of each checkout, "before" (the code that copied
// images byte for byte) and "after" (this one), packed with that
// checkout's binary and served. Then, per site:
//
//   - /blog and the post in Chromium at 390 x 844 CSS px, 2 device pixels
//     per CSS px (a phone): loaded, scrolled to the bottom slowly so lazy
//     images load, until the network is idle; the bytes and content types
//     of every image response;
//   - Lighthouse (mobile defaults, Performance alone) on the post,
//     BENCH_PHOTOS_LIGHTHOUSE_RUNS times (default 3), the two sites in
//     turn: the median score and Largest Contentful Paint.
//
// And, with the after binary alone, `pack` after a one-word change to a
// post (BENCH_PHOTOS_PACK_RUNS times, default 3, median): a copy of the
// checkout without the photos against the photo copy (whose processed
// photos are in its cache, .cache/images/, after its first pack, which is
// timed on its own), the two in turn. Target: the photo copy's at most
// 1.3 times the plain one's plus 0.5 s.
//
//   BENCH_BEFORE_BIN=/var/tmp/before-target/debug/citizen-site \
//   BENCH_BEFORE_TREE=/tmp/before node bench/photos.mjs [--record]
//
// BENCH_BEFORE_TREE is a checkout of the commit before photo processing
// (git archive 5c3cd2e | tar -x -C /tmp/before), BENCH_BEFORE_BIN its
// binary (`cargo build` there, a target directory of its own);
// BENCH_BEFORE_COMMIT names it in the table (default: what git says of the
// tree, else 5c3cd2e). Without BENCH_BEFORE_BIN only "after" is measured.
// The after binary is $CITIZEN_SITE_BIN, else the target directory's
// release build, else its debug build. With --record the run is written
// to bench/results.json (rows.photos) and docs/performance.md's table.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";
import { freePort, root, sleep, startSite, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { POST_ID, writePhotoPost } from "../tests/support/photos.mjs";
import { TARGETS, median, photosTable, recordRow } from "./report.mjs";

const RECORD = process.argv.includes("--record");
const LIGHTHOUSE_RUNS = Number(process.env.BENCH_PHOTOS_LIGHTHOUSE_RUNS ?? 3);
const PACK_RUNS = Number(process.env.BENCH_PHOTOS_PACK_RUNS ?? 3);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const PAGES = ["/blog", `/blog/${POST_ID}`];
/** The one-word changes: the plain copy's post and the photo post. */
const PLAIN_POST = { file: "content/blog/brussels-pay-launch.md", word: "Brussels" };
const PHOTO_POST = { file: `content/blog/${POST_ID}.md`, word: "Saturday" };
const round = (x, d = 1) => Number(x.toFixed(d));
const git = (dir, ...args) => {
  try {
    return execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};

/** The checkout's commit, "+ changes" when what a site is built from (not
 *  this bench or the guides) differs from it. */
function afterCommit() {
  const head = git(root, "rev-parse", "--short", "HEAD") ?? "unknown";
  const inputs = ["client", "ssr-bundle", "content", "server", "migrations", "build.rs", "Cargo.toml", "Cargo.lock", "package-lock.json", "tsconfig.json", "tests/support/photos.mjs"];
  return git(root, "status", "--porcelain", "--", ...inputs) ? `${head} + changes` : head;
}

/** The after binary: $CITIZEN_SITE_BIN, else the target's release, else debug. */
function afterBinary() {
  if (process.env.CITIZEN_SITE_BIN) return process.env.CITIZEN_SITE_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "target");
  for (const profile of ["release", "debug"]) {
    const bin = path.join(target, profile, "citizen-site");
    if (fs.existsSync(bin)) return bin;
  }
  throw new Error(`no citizen-site binary under ${target}: cargo build (or set CITIZEN_SITE_BIN)`);
}
const profileOf = (bin) => (/\/release\/[^/]+$/.test(bin) ? "release" : /\/debug\/[^/]+$/.test(bin) ? "debug" : "unknown");

/** A copy of the checkout `from` that its binary packs (the files
 *  tests/support/mod.rs's checkout_copy takes), its node_modules hard
 *  links: esbuild names a module by its real path. */
function checkoutCopy(from, prefix) {
  const tree = path.join(tempDir(prefix), "checkout");
  fs.mkdirSync(tree);
  for (const file of ["build.rs", "Cargo.toml", "Cargo.lock", "package.json", "package-lock.json", "tsconfig.json"]) {
    fs.copyFileSync(path.join(from, file), path.join(tree, file));
  }
  execFileSync("cp", ["-r", "client", "ssr-bundle", "content", "server", "migrations", tree], { cwd: from });
  const modules = fs.existsSync(path.join(from, "node_modules")) ? path.join(from, "node_modules") : path.join(root, "node_modules");
  execFileSync("cp", ["-al", modules, tree]);
  return tree;
}

/** The photo post (its files written once in `post`, the same bytes for
 *  every copy) copied into `tree`. Before photo processing a post's text
 *  could not name an image by a relative path (the browser asked
 *  /images/..., which is not served): there the text names each by the URL
 *  that build copied it to, as a maintainer had to, so the page shows the
 *  same three photos. */
async function addPhotos(post, tree) {
  fs.cpSync(path.join(post, "content"), path.join(tree, "content"), { recursive: true });
  let linked = "relative paths";
  if (!fs.existsSync(path.join(tree, "client/build/photos.mjs"))) {
    const { hash } = await import(pathToFileURL(path.join(tree, "client/build/files.mjs")).href);
    const file = path.join(tree, PHOTO_POST.file);
    let text = fs.readFileSync(file, "utf8");
    text = text.replace(/\]\(\.\.\/images\/([^ )]+)/g, (_, rel) => {
      const bytes = fs.readFileSync(path.join(tree, "content/images", rel));
      const ext = path.extname(rel);
      return `](/assets/images/${rel.slice(0, -ext.length)}-${hash(bytes)}${ext}`;
    });
    fs.writeFileSync(file, text);
    linked = "the copied files' URLs";
  }
  return linked;
}

/** `bin pack out` in `tree`: seconds. */
function pack(bin, tree, out) {
  const t0 = process.hrtime.bigint();
  execFileSync(bin, ["pack", out], { cwd: tree, stdio: ["ignore", "ignore", "pipe"] });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** `tree/file` with its last `word` (the one in the copied text) made `to`. */
function changeWord(tree, { file, word }, to, original) {
  const at = original.lastIndexOf(word);
  if (at < 0) throw new Error(`${file} has no "${word}"`);
  fs.writeFileSync(path.join(tree, file), original.slice(0, at) + to + original.slice(at + word.length));
}

/** A packed site served on a free port, ready (every page made). */
async function serve(bin) {
  const port = await freePort();
  const child = startSite(bin, port, { SSR_WORKERS: "1" });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  await Promise.race([
    waitFor(`http://127.0.0.1:${port}/readyz`, 300_000),
    exited.then((code) => {
      throw new Error(`${bin} serve exited (${code}) before it was ready`);
    }),
  ]);
  return {
    base: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Every image response of `route` as a phone loads it, scrolled to the
 *  bottom slowly, until no request has been open for a second. */
async function images(browser, base, route) {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  const open = new Set();
  let last = Date.now();
  page.on("request", (r) => {
    open.add(r);
    last = Date.now();
  });
  const done = (r) => {
    open.delete(r);
    last = Date.now();
  };
  page.on("requestfinished", done);
  page.on("requestfailed", done);
  const bodies = [];
  page.on("response", (res) => {
    const type = (res.headers()["content-type"] ?? "").split(";")[0].trim();
    if (res.request().resourceType() !== "image" && !type.startsWith("image/")) return;
    const url = new URL(res.url());
    bodies.push(
      res.body().then(
        (b) => ({ path: url.pathname, status: res.status(), type, bytes: b.length }),
        () => ({ path: url.pathname, status: res.status(), type, bytes: 0 }),
      ),
    );
  });
  try {
    await page.goto(`${base}${route}`, { waitUntil: "load" });
    for (let y = 0; ; y += 300) {
      const bottom = await page.evaluate((y) => {
        window.scrollTo(0, y);
        return y + window.innerHeight >= document.documentElement.scrollHeight;
      }, y);
      await sleep(150);
      if (bottom) break;
    }
    const deadline = Date.now() + 60_000;
    while ((open.size || Date.now() - last < 1000) && Date.now() < deadline) await sleep(100);
    const list = await Promise.all(bodies);
    const types = {};
    for (const i of list.filter((i) => i.status < 400)) types[i.type] = (types[i.type] ?? 0) + i.bytes;
    return {
      route,
      bytes: list.filter((i) => i.status < 400).reduce((n, i) => n + i.bytes, 0),
      types,
      failed: list.filter((i) => i.status >= 400).map((i) => `${i.status} ${i.path}`),
      responses: list,
    };
  } finally {
    await context.close();
  }
}

/** One Lighthouse run (mobile defaults, Performance) of `url`: its score
 *  and LCP, tried up to three times when Lighthouse itself fails. */
async function lighthouseRun(chrome, url) {
  for (let attempt = 1; ; attempt++) {
    const { lhr } = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error", formFactor: "mobile", onlyCategories: ["performance"] });
    const score = lhr.categories.performance?.score;
    if (!lhr.runtimeError && typeof score === "number") {
      return {
        performance: Math.round(score * 100),
        lcpMs: Math.round(lhr.audits["largest-contentful-paint"].numericValue),
        lcpElement: lhr.audits["largest-contentful-paint-element"]?.details?.items?.[0]?.items?.[0]?.node?.nodeLabel ?? null,
      };
    }
    const why = lhr.runtimeError ? `${lhr.runtimeError.code}: ${lhr.runtimeError.message}` : "no Performance score";
    if (attempt === 3) throw new Error(`Lighthouse on ${url}: ${why}`);
    console.error(`Lighthouse on ${url} did not measure (${why}); again...`);
  }
}

/** Both sides' page weights, then their Lighthouse runs in turn. */
async function measureSites(sides) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS.filter((f) => f !== "--headless=new") });
  try {
    for (const side of sides) {
      side.pages = [];
      for (const route of PAGES) {
        console.error(`${side.name}: images of ${route}...`);
        side.pages.push(await images(browser, side.site.base, route));
      }
    }
  } finally {
    await browser.close();
  }
  const chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: FLAGS });
  try {
    for (const side of sides) side.lighthouse = [];
    for (let i = 0; i < LIGHTHOUSE_RUNS; i++) {
      for (const side of sides) {
        console.error(`${side.name}: Lighthouse on /blog/${POST_ID} (${i + 1}/${LIGHTHOUSE_RUNS})...`);
        side.lighthouse.push(await lighthouseRun(chrome, `${side.site.base}/blog/${POST_ID}`));
      }
    }
  } finally {
    await chrome.kill();
  }
}

/** Pack times with the after binary: the plain copy and the photo copy in
 *  turn, each after a one-word change to its post. */
function packTimes(bin, plain, photos, out) {
  const originals = {
    plain: fs.readFileSync(path.join(plain, PLAIN_POST.file), "utf8"),
    photos: fs.readFileSync(path.join(photos, PHOTO_POST.file), "utf8"),
  };
  const timed = (tree, name) => {
    const to = path.join(out, name);
    const s = pack(bin, tree, to);
    fs.rmSync(to, { force: true });
    return round(s, 2);
  };
  console.error("pack: the plain copy once, untimed (its own images into its cache)...");
  timed(plain, "plain-0");
  const plainSeconds = [];
  const photoSeconds = [];
  for (let i = 1; i <= PACK_RUNS; i++) {
    console.error(`pack after a one-word change (${i}/${PACK_RUNS}): the plain copy, then the photo copy...`);
    changeWord(plain, PLAIN_POST, `Bruxelles${i}`, originals.plain);
    plainSeconds.push(timed(plain, `plain-${i}`));
    changeWord(photos, PHOTO_POST, `Saturday${i}`, originals.photos);
    photoSeconds.push(timed(photos, `photos-${i}`));
  }
  return { plainSeconds, photoSeconds };
}

export async function photosRow() {
  const after = { name: "after", bin: afterBinary(), tree: root };
  const sides = [];
  if (process.env.BENCH_BEFORE_BIN) {
    const tree = process.env.BENCH_BEFORE_TREE;
    if (!tree || !fs.existsSync(path.join(tree, "Cargo.toml"))) throw new Error("BENCH_BEFORE_TREE: the before commit's checkout (BENCH_BEFORE_BIN is its binary)");
    sides.push({ name: "before", bin: process.env.BENCH_BEFORE_BIN, tree });
  } else {
    console.error("BENCH_BEFORE_BIN is not set: measuring after only (no before column).");
  }
  sides.push(after);
  const out = tempDir("citizen-photos-out-");
  const post = tempDir("citizen-photos-post-");
  fs.mkdirSync(path.join(post, "content", "blog"), { recursive: true });
  const uploaded = await writePhotoPost(post);
  try {
    for (const side of sides) {
      side.copy = checkoutCopy(side.tree, `citizen-photos-${side.name}-`);
      side.linked = await addPhotos(post, side.copy);
      side.out = path.join(out, side.name);
      console.error(`${side.name}: pack of the photo copy (${side.bin})...`);
      side.firstPackSeconds = round(pack(side.bin, side.copy, side.out), 2);
      side.site = await serve(side.out);
    }
    await measureSites(sides);
  } finally {
    for (const side of sides) await side.site?.stop();
  }
  for (const side of sides) fs.rmSync(side.out, { force: true });

  // The plain copy packs with the after binary: after's photo copy is the other.
  const plain = checkoutCopy(root, "citizen-photos-plain-");
  const { plainSeconds, photoSeconds } = packTimes(after.bin, plain, after.copy, out);
  const [a, b] = [median(plainSeconds), median(photoSeconds)];

  const chromiumVersion = execFileSync(CHROMIUM, ["--version"], { encoding: "utf8" }).match(/[\d.]+/)?.[0] ?? "unknown";
  const lighthouseVersion = JSON.parse(fs.readFileSync(path.join(root, "node_modules/lighthouse/package.json"), "utf8")).version;
  const side = (s) =>
    s && {
      commit: s === after ? afterCommit() : (process.env.BENCH_BEFORE_COMMIT ?? git(s.tree, "rev-parse", "--short", "HEAD") ?? "5c3cd2e"),
      build: profileOf(s.bin),
      textImages: s.linked,
      pages: s.pages.map((p) => ({ route: p.route, imageBytes: p.bytes, types: p.types, failed: p.failed, responses: p.responses })),
      lighthouse: {
        runs: s.lighthouse,
        performance: median(s.lighthouse.map((r) => r.performance)),
        lcpMs: median(s.lighthouse.map((r) => r.lcpMs)),
      },
    };
  return {
    date: new Date().toISOString().slice(0, 10),
    cores: os.cpus().length,
    chromium: chromiumVersion,
    lighthouse: lighthouseVersion,
    screen: { width: PHONE.viewport.width, height: PHONE.viewport.height, deviceScaleFactor: PHONE.deviceScaleFactor },
    post: `/blog/${POST_ID}`,
    uploadedBytes: Object.values(uploaded).reduce((n, x) => n + x, 0),
    uploaded,
    before: side(sides.find((s) => s.name === "before")) ?? null,
    after: side(after),
    pack: {
      build: profileOf(after.bin),
      firstWithPhotosSeconds: after.firstPackSeconds,
      plainSeconds,
      plainMedianSeconds: a,
      photoSeconds,
      photoMedianSeconds: b,
      ratio: round(b / a, 2),
      met: b <= TARGETS.photoPackRatio * a + TARGETS.photoPackSlackSeconds,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const row = await photosRow();
  console.log(JSON.stringify({ ...row, before: row.before && { ...row.before, pages: row.before.pages.map(({ responses, ...p }) => p) }, after: { ...row.after, pages: row.after.pages.map(({ responses, ...p }) => p) } }, null, 2));
  console.log(`\n${photosTable({ rows: { photos: row } }).table}`);
  const p = row.pack;
  console.log(`\npack after a one-word change: photo copy ${p.photoMedianSeconds} s, plain copy ${p.plainMedianSeconds} s, ratio ${p.ratio}; ` +
    `${p.met ? "within" : "NOT within"} ${TARGETS.photoPackRatio} x plain + ${TARGETS.photoPackSlackSeconds} s`);
  if (RECORD) {
    recordRow("photos", row);
    console.error("recorded: bench/results.json rows.photos and docs/performance.md's table");
  }
  process.exit(p.met ? 0 : 1);
}
