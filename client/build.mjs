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
//                   the images (SVGs as they are; photos processed by sharp
//                   into AVIF, WebP and their own format at the layouts'
//                   widths, cached in .cache/images/)
//   manifest.json   what the Rust server needs: entry, CSS, per-page chunks
//                   with their static imports, images (with the size and alt
//                   text of the PNGs drawn here), every image's true size and
//                   variants (`pictures`), and every file served
// The release build also minifies, draws the preview cards and precompresses
// every asset (.br and .gz siblings); the watch build skips those and adds
// source maps, so a rebuild takes a fraction of a second.
//
// Its parts, by job, are in client/build/: bundles (esbuild), styles
// (Tailwind), images (the content images, favicons, preview cards), photos
// (sharp's processing and its cache), ssr (what is read
// from the server bundle), registries (the page registries, from
// content/routes.json), files (hashes, listing, compression), refusals
// (what is wrong in the sources, located and said as `dev` says it) and
// watch.
//
// A release build the sources stop (a syntax error, a bad import, a page
// without its component, a refused image) prints each error and nothing
// else (no stack trace) and exits with 1; build.rs and `pack` then stop.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { esbuildOptions, modulesOf } from "./build/bundles.mjs";
import { listFiles, root } from "./build/files.mjs";
import { favicons, ImagesRefused, previewCards, processImages } from "./build/images.mjs";
import { PhotoCache } from "./build/photos.mjs";
import { formatError, isSourcesFault, locatedErrors } from "./build/refusals.mjs";
import { writeRegistries } from "./build/registries.mjs";
import { errorScreenTemplate, ssrContext } from "./build/ssr.mjs";
import { tailwind, writeCss } from "./build/styles.mjs";
import { watchBuild } from "./build/watch.mjs";

const args = process.argv.slice(2);
const watch = args.includes("--watch");
const out = path.resolve(args.find((a) => !a.startsWith("--")) ?? path.join(root, "target", "web"));

async function releaseBuild() {
  const assetsDir = path.join(out, "assets");
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(assetsDir, { recursive: true });
  writeRegistries({ refuseMissing: true });
  // The images first: a photo the build refuses stops it before anything else.
  const cache = new PhotoCache();
  const { images, pictures, css: placeholders } = await processImages(assetsDir, cache);
  const options = esbuildOptions(out, false, () => pictures);
  await warn(await esbuild.build(options.ssr));
  const client = await warn(await esbuild.build(options.client));
  const css = writeCss(assetsDir, (await tailwind(true)()) + placeholders);
  const rasters = {};
  // The server bundle just built, evaluated once for what is drawn from it.
  const ssr = ssrContext(fs.readFileSync(path.join(out, "ssr.js"), "utf8"));
  await previewCards(assetsDir, images, pictures, rasters, ssr, cache);
  favicons(assetsDir, images, rasters);
  const { modules } = modulesOf(client.metafile, out);
  const files = listFiles(out, assetsDir, true);
  const errorScreen = errorScreenTemplate(ssr);
  fs.writeFileSync(path.join(out, "manifest.json"), JSON.stringify({ ...modules, css, images, pictures, rasters, files, errorScreen }, null, 2));
  cache.prune();
}

/** esbuild's `result`, once its warnings are printed as esbuild prints them. */
async function warn(result) {
  for (const text of await esbuild.formatMessages(result.warnings, { kind: "warning", color: Boolean(process.stderr.isTTY) })) process.stderr.write(text);
  return result;
}

try {
  if (watch) await watchBuild(out);
  else await releaseBuild();
} catch (e) {
  // What the maintainer fixes in the sources: where and what, no stack.
  if (e instanceof ImagesRefused) {
    for (const err of e.errors) process.stderr.write(`error: ${err.message}\n`);
  } else if (isSourcesFault(e)) {
    for (const err of locatedErrors(e)) process.stderr.write(formatError(err));
  } else {
    throw e;
  }
  process.exit(1);
}
