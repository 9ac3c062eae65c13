// The dev builder's rebuild of its two esbuild contexts (server and browser
// bundles), with esbuild itself: a fix saved just after a failed build is
// built from the fixed file, even when one context was still busy with the
// failed build. esbuild answers rebuild() on a busy context with the build
// in progress, so judging the failed build before every context had finished
// made the next build report the old error (seen in CI: the dev page kept
// "Build failed" after the fix until the next save).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import * as esbuild from "esbuild";
import { settleAll } from "../../client/build/watch.mjs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "citizen-rebuild-"));
const page = path.join(dir, "page.ts");
const good = "export default function Page() {\n  return 1;\n}\n";
const broken = "export default functio Page() {\n  return 1;\n}\n";
const contexts = [];

after(async () => {
  await Promise.all(contexts.map((c) => c.dispose()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A context bundling page.ts; `slowMs` makes its load of page.ts take that
 *  long after reading it, as a bigger bundle's build would. */
async function context(name, slowMs = 0) {
  const entry = path.join(dir, `${name}.ts`);
  fs.writeFileSync(entry, 'import Page from "./page";\nexport const value = Page();\n');
  const slow = {
    name: "slow",
    setup(build) {
      build.onLoad({ filter: /page\.ts$/ }, async (args) => {
        const contents = fs.readFileSync(args.path, "utf8");
        await new Promise((resolve) => setTimeout(resolve, slowMs));
        return { contents, loader: "ts" };
      });
    },
  };
  const ctx = await esbuild.context({ entryPoints: [entry], bundle: true, write: false, logLevel: "silent", plugins: slowMs ? [slow] : [] });
  contexts.push(ctx);
  return ctx;
}

test("a fix saved while the failed build is still finishing is built from the fixed file", async () => {
  const server = await context("server");
  const browser = await context("browser", 400);
  fs.writeFileSync(page, good);
  await settleAll([server.rebuild(), browser.rebuild()]);

  fs.writeFileSync(page, broken);
  const failure = await settleAll([server.rebuild(), browser.rebuild()]).then(
    () => assert.fail("the broken file built"),
    (e) => e,
  );
  const texts = failure.errors.map((e) => `${path.basename(e.location?.file ?? "")}: ${e.text}`);
  assert.ok(texts.includes('page.ts: Expected ";" but found "Page"'), texts.join("\n"));

  // Saved at once, as a maintainer fixing the typo they just saw would.
  fs.writeFileSync(page, good);
  const [serverBuild, browserBuild] = await settleAll([server.rebuild(), browser.rebuild()]).catch((e) =>
    assert.fail(`the fixed file did not build: ${e.errors.map((x) => x.text).join("; ")}`),
  );
  for (const build of [serverBuild, browserBuild]) {
    assert.deepEqual(build.errors, []);
    assert.match(build.outputFiles[0].text, /function Page\(\)/);
  }
});

test("a failure that is not esbuild's is reported with its message", async () => {
  const failure = await settleAll([Promise.resolve(1), Promise.reject(new Error("the stylesheet broke"))]).then(
    () => assert.fail("settled without the failure"),
    (e) => e,
  );
  assert.deepEqual(failure.errors, [{ text: "the stylesheet broke" }]);
});
