// The watch build of `citizen-site dev`.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { esbuildOptions, modulesOf } from "./bundles.mjs";
import { listFiles, place, root, walk } from "./files.mjs";
import { favicons, ImagesRefused, processImages } from "./images.mjs";
import { PhotoCache } from "./photos.mjs";
import { locatedErrors } from "./refusals.mjs";
import { writeRegistries } from "./registries.mjs";
import { errorScreenTemplate, ssrContext } from "./ssr.mjs";
import { tailwind, writeCss } from "./styles.mjs";

/** The watch build, driven by `citizen-site dev` through this process's
 *  stdio: each build goes to a new OUT/gen-N/ (the server reads it whole,
 *  never half-written), and one JSON line on stdout reports it:
 *    {"front": {"ok": true, "dir": ".../gen-3", "ms": 180, "missing": []}, "changed": [...]}
 *    {"front": {"ok": false, "errors": [{file, line, column, text, lineText}],
 *               "pages": ["Home"] | null (every page), "ms": 40, "missing": []}, "changed": [...]}
 *  `missing`: the pages of the route table whose component is not written
 *  yet, left out of the build, each an error as above with its `page`.
 *    {"front": null, "changed": ["content/blog/x.md"]}  (content only: the
 *                                                        server re-reads it)
 *  Files are watched with inotify (fs.watch) and each change triggers the
 *  esbuild contexts' incremental rebuild: esbuild's own watch mode polls and
 *  can take up to two seconds to notice a change. The process exits when
 *  stdin closes (the server is gone). */
export async function watchBuild(out) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  // esbuild writes nothing itself here; outputs are placed under each gen-N.
  const base = path.join(out, "current");
  // Photos are processed once (photos.mjs: cached on disk and in memory),
  // not at every rebuild; each build links its variants into its folder.
  const cache = new PhotoCache();
  let pictures = {};
  const options = esbuildOptions(base, true, () => pictures);
  const contexts = { ssr: await esbuild.context(options.ssr), client: await esbuild.context(options.client) };
  const stylesheet = tailwind(false);
  let generation = 0;
  let lastSources = null;
  const report = (message) => process.stdout.write(JSON.stringify(message) + "\n");

  async function buildFront(changed) {
    const started = performance.now();
    const dir = path.join(out, `gen-${generation + 1}`);
    let missing = [];
    try {
      missing = writeRegistries({ refuseMissing: false });
      const assetsDir = path.join(dir, "assets");
      fs.mkdirSync(assetsDir, { recursive: true });
      const processed = await processImages(assetsDir, cache).catch((e) => {
        if (!(e instanceof ImagesRefused)) throw e;
        throw { errors: e.errors.map((err) => ({ text: err.reason, location: { file: err.file, line: null, column: -1 } })) };
      });
      pictures = processed.pictures;
      const css = stylesheet(changed).catch((e) => {
        // Tailwind's errors name no file: they come from the stylesheet.
        throw { errors: [{ text: e.message ?? String(e), location: { file: "client/styles.css", line: null, column: -1 } }] };
      });
      const [ssr, client, cssText] = await settleAll([contexts.ssr.rebuild(), contexts.client.rebuild(), css]);
      generation += 1;
      for (const f of client.outputFiles) place(f, base, dir);
      for (const f of ssr.outputFiles.filter((f) => /[\\/]ssr\.js(\.map)?$/.test(f.path))) place(f, base, dir);
      const { images } = processed;
      const rasters = {};
      favicons(assetsDir, images, rasters);
      const { modules, sources } = modulesOf(client.metafile, base);
      lastSources = sources;
      const ssrCode = ssr.outputFiles.find((f) => /[\\/]ssr\.js$/.test(f.path)).text;
      const manifest = {
        ...modules,
        css: writeCss(assetsDir, cssText + processed.css),
        images,
        pictures,
        rasters,
        files: listFiles(dir, assetsDir, false),
        errorScreen: errorScreenTemplate(ssrContext(ssrCode)),
      };
      fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest));
      // Keep the two builds before this one: a browser may still be loading
      // from them while it is told to reload.
      fs.rmSync(path.join(out, `gen-${generation - 3}`), { recursive: true, force: true });
      return { ok: true, dir, ms: Math.round(performance.now() - started), missing };
    } catch (err) {
      // A failed build leaves no folder behind.
      if (!fs.existsSync(path.join(dir, "manifest.json"))) fs.rmSync(dir, { recursive: true, force: true });
      const errors = locatedErrors(err);
      return { ok: false, errors, pages: brokenPages(errors, lastSources), ms: Math.round(performance.now() - started), missing };
    }
  }

  let pending = new Set();
  let running = false;
  let timer = null;
  // Sources by extension: editors' temporary files (sed's, vim's 4913) have other names.
  const source = /\.(tsx?|jsx?|mjs|css|json|md|svg|png|jpe?g|webp|avif)$/i;
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
 *  removed under `top`, folders made later included (and the files already
 *  in one when its watch begins: a page's folder and its component saved at
 *  once). One inotify watch per folder: Node's recursive fs.watch on Linux
 *  watches each file and loses a file that an editor replaces by renaming a
 *  new one over it. */
function watchTree(top, onChange) {
  const watching = new Set();
  const add = (dir) => {
    if (watching.has(dir)) return;
    let watcher;
    try {
      watcher = fs.watch(dir, (_event, name) => {
        if (!name) return;
        const file = path.join(dir, name.toString());
        if (!fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) return onChange(file);
        add(file);
        for (const inside of walk(file)) onChange(inside);
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

/** The results of `builds`, once every one has finished; when any failed,
 *  throws their errors together. Not Promise.all, which rejects as soon as one
 *  build fails: esbuild answers a context's rebuild() called while that
 *  context is still building with the build in progress, so the next change's
 *  rebuild would get the slower context's result of the old sources (a fix
 *  saved then would still show the error it fixed, until the next save). */
export async function settleAll(builds) {
  const settled = await Promise.allSettled(builds);
  const failed = settled.filter((s) => s.status === "rejected").map((s) => s.reason);
  if (failed.length > 0) throw { errors: failed.flatMap((e) => e?.errors ?? [{ text: e?.message ?? String(e) }]) };
  return settled.map((s) => s.value);
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
