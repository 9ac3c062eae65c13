// Row 14's client (bench/tls.mjs, idleMemory): opens COUNT TLS connections
// to 127.0.0.1:PORT, each a handshake and one keep-alive GET of one of
// PAGES (in turn), and leaves them open and idle. Each handshake resumes
// the newest session the server gave (as returning visitors do; twice as
// many connections a second as full handshakes, on both sides). Prints "open COUNT" when
// all are; on a "check" line from standard input prints "still open N";
// exits when standard input ends. Run in a process of its own, with an
// open-file limit above COUNT.
//
//   BENCH_CA=<PEM> node bench/idle-tls.mjs PORT COUNT PAGES
import readline from "node:readline";
import { connection, requestBytes } from "./instructions.mjs";

const [port, count] = process.argv.slice(2, 4).map(Number);
const pages = process.argv[4].split(",");
const ca = process.env.BENCH_CA;
/** Handshakes under way at once. */
const AT_ONCE = 200;

const open = [];
let closed = 0;
let next = 0;
let session;
async function one() {
  while (next < count) {
    const page = pages[next++ % pages.length];
    const c = connection(port, { ca, session });
    c.socket.on("session", (s) => (session = s));
    c.socket.once("close", () => closed++);
    const res = await c.request(requestBytes(page, "br"));
    if (res.status !== 200) throw new Error(`${page}: ${res.status}`);
    open.push(c);
  }
}
await Promise.all(Array.from({ length: AT_ONCE }, one));
console.log(`open ${open.length}`);
const input = readline.createInterface({ input: process.stdin });
input.on("line", (l) => {
  if (l === "check") console.log(`still open ${open.length - closed}`);
});
input.on("close", () => {
  open.forEach((c) => c.close());
  process.exit(0);
});
