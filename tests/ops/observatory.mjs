// Grades the site with Mozilla's HTTP Observatory scanner (its npm package,
// run locally) as it is deployed: the server behind a TLS-terminating nginx
// that redirects http to https, with SITE_URL on https. Prints every test's
// result and score modifier; fails unless the grade is A+.
//
//   node tests/ops/observatory.mjs       (npm run observatory)
//
// The scanner lives in tests/ops/observatory/ and is not installed here
// (.ci/run installs it): `npm install --prefix tests/ops/observatory
// --ignore-scripts` (its install scripts download the HSTS preload list and
// the TLD list from the internet). A local CA signs a certificate for
// 127.0.0.1 and the scanner trusts it (NODE_EXTRA_CA_CERTS), so certificate
// checks run as they would against a real host. Needs nginx and openssl.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freePort, need, root, siteBinary, startNginx, startSite, table, tempDir, waitFor } from "./tools.mjs";

need("nginx", "nginx");
need("openssl", "openssl");
const scannerDir = path.join(root, "tests/ops/observatory");
const scanner = path.join(scannerDir, "node_modules/@mdn/mdn-http-observatory");
if (!fs.existsSync(scanner)) {
  throw new Error("the Observatory scanner is needed: npm install --prefix tests/ops/observatory --ignore-scripts");
}
// The preload list the install script would fetch; our loopback host is on
// no such list, so an empty one gives the same answer.
const preload = path.join(scanner, "conf/hsts-preload.json");
if (!fs.existsSync(preload)) fs.writeFileSync(preload, "{}");

// A CA and a certificate for 127.0.0.1 signed by it.
const pki = tempDir("citizen-pki-");
const ssl = (...args) => execFileSync("openssl", args, { cwd: pki, stdio: "pipe" });
ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=citizen-site test CA");
ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "site.key", "-out", "site.csr", "-subj", "/CN=127.0.0.1");
fs.writeFileSync(path.join(pki, "san.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n");
ssl("x509", "-req", "-in", "site.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "site.pem", "-days", "2", "-extfile", "san.ext");

const sitePort = await freePort();
const tlsPort = await freePort();
const host = `127.0.0.1:${tlsPort}`;
const site = startSite(siteBinary(), sitePort, { SITE_URL: `https://${host}`, TRUSTED_PROXIES: "127.0.0.1" });
await waitFor(`http://127.0.0.1:${sitePort}/readyz`);
// One port, as the scanner asks http:// and https:// of the same host: TLS,
// and nginx's 497 (plain HTTP sent to a TLS port) redirected to https.
const nginx = await startNginx(`
  server {
    listen 127.0.0.1:${tlsPort} ssl;
    ssl_certificate ${pki}/site.pem;
    ssl_certificate_key ${pki}/site.key;
    error_page 497 =301 https://$host:$server_port$request_uri;
    location / {
      proxy_pass http://127.0.0.1:${sitePort};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto https;
    }
  }`);
await new Promise((r) => setTimeout(r, 300));

const scan = spawnSync(
  process.execPath,
  ["--input-type=module", "-e", `
    import { scan } from ${JSON.stringify(path.join(scanner, "src/scanner/index.js"))};
    const r = await scan(${JSON.stringify(host)});
    console.log(JSON.stringify({ grade: r.scan.grade, score: r.scan.score, tests: Object.entries(r.tests).map(([name, t]) => [name, t.result, t.scoreModifier, t.pass]) }));
  `],
  { env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(pki, "ca.pem") }, encoding: "utf8" },
);
site.kill("SIGTERM");
nginx.kill("SIGTERM");
if (scan.status !== 0) {
  console.error(scan.stdout, scan.stderr);
  process.exit(1);
}
const result = JSON.parse(scan.stdout.trim().split("\n").at(-1));
console.log(`\nHTTP Observatory (@mdn/mdn-http-observatory), https://${host}/ behind nginx TLS: grade ${result.grade}, score ${result.score}\n`);
console.log(table(["test", "result", "modifier", "pass"], result.tests.map(([n, r, m, p]) => [n, r, String(m), p ? "yes" : "no"])));
if (result.grade !== "A+") {
  console.error(`\nobservatory FAILED: grade ${result.grade}, A+ wanted`);
  process.exit(1);
}
console.log("\nobservatory passed");
process.exit(0);
