// What a new plain connection costs in user space: instructions per new
// connection and its one request (`/` in gzip, `Connection: close`, read to
// the close), ours against nginx, each under callgrind as in row 1 (one
// connection worker each, the median of WINDOWS windows), with ours'
// costliest functions and what calls memcpy (names need the `profiling`
// build, the default). For the work on row 3's new-connection figures
// (docs/performance.md, "Where a request's time went"); bench/tails.mjs
// gives the same load's CPU time, kernel included.
//
//   node bench/new-connection.mjs [BINARY]
//
// BENCH_NEW_CONNECTIONS (400) connections per window, 4 at a time.
import fs from "node:fs";
import path from "node:path";
import { freePort, need, siteBinary, startNginx, tempDir, waitFor } from "../tests/ops/tools.mjs";
import { checkAnswer, connection, requestBytes, selfCosts, startOursCounted, valgrind, windows } from "./instructions.mjs";
import { mirror, nginxConfig, NGINX_BROTLI } from "./run.mjs";

const PER_WINDOW = Number(process.env.BENCH_NEW_CONNECTIONS ?? 400);
const AT_ONCE = 4;

/** `count` visits of `/`: each a new connection, one GET, its answer
 *  checked, and the server's close awaited. */
async function visits(port, count) {
  let left = count;
  const visitor = async () => {
    while (left-- > 0) {
      const c = connection(port);
      const closed = new Promise((resolve) => c.socket.once("close", resolve));
      checkAnswer(await c.request(requestBytes("/", "gzip", true)), "/", "gzip");
      await closed;
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, visitor));
}

/** Instructions per visit on a server under callgrind: a warm-up, then the windows. */
async function measure(pid, port, out) {
  await visits(port, 200);
  return windows(pid, out, PER_WINDOW, () => visits(port, PER_WINDOW));
}

/** Per visit, what each function of the dump `file` spent calling memcpy or memmove. */
function memcpyCallers(file) {
  const callers = new Map();
  let fn = "?";
  let callee = "";
  let next = false;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("fn=")) fn = line.slice(3).replace(/^\(\d+\) ?/, "") || fn;
    else if (line.startsWith("cfn=")) callee = line.slice(4).replace(/^\(\d+\) ?/, "") || callee;
    else if (line.startsWith("calls=")) next = true;
    else if (next && /^[\d+*-]/.test(line)) {
      next = false;
      if (/memcpy|memmove/.test(callee)) callers.set(fn, (callers.get(fn) ?? 0) + Number(line.split(" ")[1] ?? 0));
    }
  }
  return [...callers].map(([name, n]) => ({ fn: name, instructions: n / PER_WINDOW })).sort((x, y) => y.instructions - x.instructions);
}

need("valgrind", "valgrind");
const bin = process.argv[2] ?? siteBinary("profiling");
const dir = tempDir("citizen-new-connection-");
const ours = await startOursCounted(bin, dir, "ours");
const { www, pageHeaders } = await mirror(ours.port);
const oursFigure = await measure(ours.child.pid, ours.port, ours.out);
ours.child.kill("SIGKILL");
const port = await freePort();
const out = path.join(dir, "nginx.out");
const nginx = await startNginx(nginxConfig(www, port, pageHeaders), `http://127.0.0.1:${port}/`, { workers: 0, main: NGINX_BROTLI, wrap: valgrind(out), readyMs: 120_000 });
await waitFor(`http://127.0.0.1:${port}/`);
const nginxFigure = await measure(nginx.pid, port, out);
nginx.kill("SIGKILL");

const round = (w) => w.map(Math.round).join(", ");
console.log(`instructions per new connection and one request (windows of ${PER_WINDOW}):`);
console.log(`  ours  ${Math.round(oursFigure.instructions)} (${round(oursFigure.windows)})`);
console.log(`  nginx ${Math.round(nginxFigure.instructions)} (${round(nginxFigure.windows)})`);
console.log(`  ratio ${(oursFigure.instructions / nginxFigure.instructions).toFixed(3)}`);
console.log("ours' costliest functions (their own instructions):");
for (const f of selfCosts(oursFigure.file, PER_WINDOW).slice(0, 25)) console.log(`${f.instructions.toFixed(0).padStart(7)}  ${f.fn.slice(0, 140)}`);
console.log("ours' calls to memcpy, by caller:");
for (const f of memcpyCallers(oursFigure.file).slice(0, 10)) console.log(`${f.instructions.toFixed(0).padStart(7)}  ${f.fn.slice(0, 140)}`);
process.exit(0);
