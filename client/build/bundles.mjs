// The server bundle and the client's ES modules, by esbuild, and what the
// manifest says about the modules each page needs.
import fs from "node:fs";
import path from "node:path";
import { root, walk } from "./files.mjs";
import { RASTER } from "./photos.mjs";

/** esbuild options for the server bundle and the client modules. `base` is
 *  where they are written (release) or would be (watch, written by us).
 *  `pictures()` is the current build's processed images (images.mjs): a
 *  photo imported from a page is its `SiteImage`, drawn by `<Picture>`. */
export function esbuildOptions(base, dev, pictures) {
  const shared = {
    bundle: true,
    minify: !dev,
    legalComments: "none",
    jsx: "automatic",
    target: "es2022",
    define: { "process.env.NODE_ENV": dev ? '"development"' : '"production"' },
    // Neither build prints: the watch build reports to `dev`, the release
    // build prints errors as dev shows them and warnings as esbuild does.
    logLevel: "silent",
    absWorkingDir: root,
    // SVGs imported from TSX become hashed files under /assets/ (their URL);
    // photos, their processed variants (rasterImports).
    loader: { ".svg": "file" },
    assetNames: "[name]-[hash]",
    publicPath: "/assets",
    plugins: [onlyUsedIcons(), rasterImports(pictures)],
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
      // The dev server, and `pack` for a page that does not render, map a
      // render's stack trace back to the sources with this map (positions
      // only: they read the sources from disk). Never in the payload.
      sourcemap: "external",
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
      // V8's explicit compile hint (Chromium 136 on; other engines read a
      // comment): every function of a module is compiled with the module,
      // not one by one when first called. A page calls most of what it
      // loads while it hydrates, and the evaluation of the entry, the
      // longest task of a load, took half as long with it
      // (docs/search-engines.md).
      banner: { js: "//# allFunctionsCalledOnLoad" },
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

/** A JPEG, PNG, WebP or AVIF imported from a page is never bundled as it
 *  is: the import's value is the image as the build processed it (its
 *  `SiteImage`: true size, AVIF, WebP and fallback srcsets), which only
 *  `<Picture>` draws. One outside content/images/ is refused. */
function rasterImports(pictures) {
  const imagesDir = path.join(root, "content", "images");
  return {
    name: "raster-imports",
    setup(build) {
      build.onLoad({ filter: RASTER }, (args) => {
        const rel = path.relative(imagesDir, args.path).split(path.sep).join("/");
        const image = rel.startsWith("..") ? undefined : pictures()[rel];
        if (!image) {
          return { errors: [{ text: `a photo a page shows must be under content/images/ (it is processed there): move ${path.relative(root, args.path)} there` }] };
        }
        return { contents: `export default ${JSON.stringify(image)};`, loader: "js", watchFiles: [args.path] };
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

/** What the manifest says about the client modules: the entry, the chunks it
 *  imports statically, and per page its chunk plus every chunk that imports
 *  statically, so the boot module can preload exactly what a route needs. */
export function modulesOf(metafile, base) {
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
    } else if (meta.entryPoint.startsWith("client/features/")) {
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
