// The Node.js peer for the render benchmark: one Node HTTP server that calls
// renderToString through the very same SSR bundle the Rust server embeds
// (globalThis.__ssr_render from ssr.js), with the same loader data, and
// wraps the result in the same document shape. No page cache.
//
//   node bench/node-peer.mjs SSR_JS PORT DATA_JSON
//
// DATA_JSON maps each URL to the bootstrap JSON the Rust loaders produced.
import fs from "node:fs";
import http from "node:http";
import vm from "node:vm";

const [bundlePath, port, dataPath] = process.argv.slice(2);
vm.runInThisContext(fs.readFileSync(bundlePath, "utf8"), { filename: "ssr.js" });
const data = JSON.parse(fs.readFileSync(dataPath, "utf8"));
const escapeJson = (s) => s.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");

http
  .createServer((req, res) => {
    const bootstrap = data[req.url];
    if (!bootstrap) {
      res.writeHead(404).end();
      return;
    }
    const out = globalThis.__ssr_render(req.url, bootstrap);
    const html =
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">${out.head}</head>` +
      `<body><div id="root">${out.html}</div><script id="__SITE_DATA__" type="application/json">` +
      `${escapeJson(bootstrap)}</script></body></html>`;
    res.writeHead(out.status, { "content-type": "text/html; charset=utf-8" }).end(html);
  })
  .listen(Number(port), "127.0.0.1");
