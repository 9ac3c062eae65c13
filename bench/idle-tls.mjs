// Row 14's client (bench/tls.mjs, idleMemory): opens COUNT TLS connections
// to 127.0.0.1:PORT, each a handshake and one keep-alive GET of one of
// PAGES (in turn), and leaves them open and idle. Each handshake resumes
// the newest session the server gave (as returning visitors do; twice as
// many connections a second as full handshakes, on both sides); one that
// has been silent for 5 s while the others open sends its GET again.
// Prints "open COUNT" when all are; on a "check" line from standard input
// prints "still open N"; exits when standard input ends. Run in a process
// of its own, with an open-file limit above COUNT.
//
//   BENCH_CA=<PEM> node bench/idle-tls.mjs PORT COUNT PAGES
import readline from "node:readline";
import tls from "node:tls";
import { connection, requestBytes } from "./instructions.mjs";

const [port, count] = process.argv.slice(2, 4).map(Number);
const pages = process.argv[4].split(",");
// One context for every connection: made per connection (from the CA's
// PEM), it cost this client more than the handshakes, and 10,000
// connections took 14 to 20 s to open, past ours' 10 s bound.
const context = tls.createSecureContext({ ca: process.env.BENCH_CA });
/** Handshakes under way at once. */
const AT_ONCE = 200;

const open = [];
let closed = 0;
let next = 0;
let session;
async function one() {
  while (next < count) {
    const page = pages[next++ % pages.length];
    const c = connection(port, { context, session });
    c.socket.on("session", (s) => (session = s));
    c.socket.once("close", () => closed++);
    const res = await c.request(requestBytes(page, "br"));
    if (res.status !== 200) throw new Error(`${page}: ${res.status}`);
    open.push({ c, page, last: Date.now() });
  }
}

/** While the others open, a connection silent for REFRESH_MS sends its
 *  GET again: ours closes one silent for 10 s, and on a slower machine
 *  opening 10,000 takes longer than that. Each is idle again when all are
 *  open (its answer read), as after its first GET. */
const REFRESH_MS = 5_000;
let refreshing = Promise.resolve();
const refresher = setInterval(() => {
  const due = open.filter((o) => !o.busy && Date.now() - o.last > REFRESH_MS);
  const sent = due.map(async (o) => {
    o.busy = true;
    const res = await o.c.request(requestBytes(o.page, "br"));
    if (res.status !== 200) throw new Error(`${o.page}: ${res.status}`);
    o.last = Date.now();
    o.busy = false;
  });
  refreshing = Promise.all([refreshing, ...sent]);
}, 500);
await Promise.all(Array.from({ length: AT_ONCE }, one));
clearInterval(refresher);
await refreshing;
console.log(`open ${open.length}`);
const input = readline.createInterface({ input: process.stdin });
input.on("line", (l) => {
  if (l === "check") console.log(`still open ${open.length - closed}`);
});
input.on("close", () => {
  open.forEach((o) => o.c.close());
  process.exit(0);
});
