#!/usr/bin/env bash
# Runs inside a throwaway root booted by a real systemd (tests/live_systemd.rs
# boots it with tests/support/throwaway_systemd.rs): installs the site
# exactly as docs/deploy.md's steps say, runs the operator's commands as
# docs/operate.md's "Under systemd" says (the steps/ files are those blocks,
# word for word), and checks what a visitor and an operator would notice.
# Any failure prints why and the service's journal, and exits non-zero.
set -euo pipefail
cd /live/site
site=example.org
https=(--resolve "$site:443:127.0.0.1" --cacert ca.pem)
journal() { journalctl -u citizen-site -u citizen-site.socket -u citizen-site-http.socket -u citizen-site-quic.socket --no-pager | tail -n 60; }
fail() { echo "FAIL: $*"; echo "--- journal"; journal; exit 1; }
# `journal_says PATTERN`: the site's journal holds PATTERN, read until it
# does, 10 s at most. A command's own output (an ExecReload's error) reaches
# the journal through its output stream, which journald may file after
# `systemctl reload` has returned (seen on a busy host, for the env file's
# refused reload and for the broken binary's).
journal_says() {
  for _ in $(seq 50); do
    # grep reads to the end (no -q), so journalctl never dies of SIGPIPE,
    # which pipefail would take for "not found"; -F: a pattern's "(s)" is text.
    journalctl -u citizen-site --no-pager -o cat | grep -F -- "$1" >/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# A server has D-Bus running (systemd-run, in the operator's step, needs
# it); this root starts nothing it is not asked for.
systemctl start dbus.socket dbus.service
# The guide's steps: settings with the operator's own certificate files,
# then the service and its sockets.
bash steps/own-certificate.sh || fail "the guide's settings step failed"
bash steps/service.sh || fail "the guide's service step failed"
for _ in $(seq 120); do [ "$(systemctl is-active citizen-site)" = active ] && break; sleep 0.5; done
[ "$(systemctl is-active citizen-site)" = active ] || fail "citizen-site is $(systemctl is-active citizen-site)"
echo "ok: active (Type=notify: its pages are rendered)"

# Every page of the sitemap, and the 404, over HTTPS with HTTP/2.
paths=$(curl -sS "${https[@]}" "https://$site/sitemap.xml" | grep -o '<loc>[^<]*</loc>' | sed -e 's|<loc>https://[^/]*||' -e 's|</loc>||')
[ "$(echo "$paths" | wc -l)" -ge 15 ] || fail "the sitemap lists too few pages: $paths"
for path in $paths; do
  got=$(curl -sS --http2 "${https[@]}" -o /dev/null -w '%{http_version} %{http_code}' "https://$site$path")
  [ "$got" = "2 200" ] || fail "$path: $got (want HTTP/2 200)"
done
got=$(curl -sS --http2 "${https[@]}" -o /dev/null -w '%{http_version} %{http_code}' "https://$site/no-such-page")
[ "$got" = "2 404" ] || fail "/no-such-page: $got"
echo "ok: $(echo "$paths" | wc -l) pages and the 404 over HTTP/2"

# A render the start did not make, under the system-call filter (the start
# makes each listed query value of a route's own path, not of a post's).
renders() { curl -sS "${https[@]}" "https://$site/metrics" | awk '/^ssr_render_duration_seconds_count/ {print $2}'; }
before=$(renders)
got=$(curl -sS "${https[@]}" -o page.html -w '%{http_code}' "https://$site/blog/nfc-integration?type=Feature")
[ "$got" = 200 ] && grep -q '</html>' page.html || fail "/blog/nfc-integration?type=Feature: $got"
after=$(renders)
[ "${after%.*}" -gt "${before%.*}" ] || fail "no render counted ($before -> $after)"
echo "ok: an uncached render ($before -> $after renders)"

# The contact form's request, stored in the state folder of the service's user.
got=$(curl -sS "${https[@]}" -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
  --data '{"name":"Live Town","contactPerson":"Ana","email":"ana@example.org","website":"https://example.org","description":"Sent to the unit under a live systemd","tags":["Loyalty"]}' \
  "https://$site/api/save-to-notion")
[ "$got" = 200 ] || fail "the form: $got"
pid=$(systemctl show -p MainPID --value citizen-site)
service_uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
db_uid=$(stat -L -c %u /var/lib/citizen-site/citizen-site.db)
[ "$service_uid" != 0 ] && [ "$db_uid" = "$service_uid" ] || fail "the database belongs to $db_uid, the service runs as $service_uid"
echo "ok: stored in /var/lib/citizen-site, owned by the service's user ($service_uid)"

# The operator's command, as the guide runs it.
listed=$(bash steps/operate.sh)
echo "$listed" | grep -q 'Live Town' || fail "intro list does not show the request: $listed"
echo "ok: the operator's command lists it"

# HTTP redirects to HTTPS.
got=$(curl -sS --resolve "$site:80:127.0.0.1" -o /dev/null -w '%{http_code} %{redirect_url}' "http://$site/about?x=1")
[ "$got" = "301 https://$site/about?x=1" ] || fail "http://$site/about?x=1: $got"
echo "ok: http redirects"

# Publishing under load: five `systemctl restart`s, then three `systemctl
# reload`s (each to a new copy of the binary, as a publish installs one);
# nothing may fail, every acknowledged request is stored once, and the
# worst wait of each is printed on the line `waits:` (the bench row,
# bench/reload.mjs).
expect=$(node /live/site/swap-load.mjs snapshot --url "https://$site" --connect 127.0.0.1:443 --ca ca.pem)
echo "$expect" > expect.json
restart_once() {
  systemctl restart citizen-site
  [ "$(systemctl is-active citizen-site)" = active ] || fail "restart: $(systemctl is-active citizen-site)"
}
reload_once() {
  local old new
  install -m 0755 /live/site/citizen-site /usr/local/bin/citizen-site
  old=$(systemctl show -p MainPID --value citizen-site)
  systemctl reload citizen-site || fail "systemctl reload failed"
  new=$(systemctl show -p MainPID --value citizen-site)
  [ "$new" != "$old" ] && [ "$new" != 0 ] || fail "the main PID is still $old after a reload"
  [ "$(systemctl is-active citizen-site)" = active ] || fail "reload: $(systemctl is-active citizen-site)"
  # (The overlay may show the path of its upper layer.)
  exe=$(readlink "/proc/$new/exe" || true)
  case "$exe" in */usr/local/bin/citizen-site) ;; *) fail "pid $new runs $exe, not the installed binary" ;; esac
}
# Each name in FILE (acknowledged intro requests) is stored exactly once.
stored_once() { # FILE
  local stored who n
  stored=$(bash -c "$(cat steps/operate.sh) --json")
  while read -r who; do
    [ -z "$who" ] && continue
    n=$(echo "$stored" | grep -c "\"name\": \"$who\"" || true)
    [ "$n" = 1 ] || fail "$who was acknowledged and is stored $n times"
  done < "$1"
}
under_load() { # NAME COUNT STEP
  local name=$1 count=$2 step=$3 i
  rm -f marks && mkfifo marks
  node /live/site/swap-load.mjs load --url "https://$site" --connect 127.0.0.1:443 --ca ca.pem \
    --expect expect.json --post-every-ms 7000 <marks >"report-$name.json" &
  local load=$!
  exec 3>marks
  sleep 2
  for i in $(seq "$count"); do
    echo swap >&3
    $step
    echo settled >&3
    sleep 1.5
  done
  echo stop >&3
  exec 3>&-
  wait $load
  NAME=$name COUNT=$count node -e '
    const { NAME: name, COUNT: count } = process.env;
    const r = JSON.parse(require("fs").readFileSync(`report-${name}.json`, "utf8"));
    console.log(`${name}: ${r.requests} requests (${JSON.stringify(r.byClient)}), ${r.failed} failed, retried ${JSON.stringify(r.retried)}, latency steady ${JSON.stringify(r.latencyMs.steady)} during ${JSON.stringify(r.latencyMs.duringSwaps)} (ms)`);
    if (r.failed) { console.log(r.failures.join("\n")); process.exit(1); }
    if (r.swaps !== Number(count) || r.serials.length !== 1) { console.log("swaps", r.swaps, "serials", r.serials); process.exit(1); }
    for (const c of ["http1-keepalive", "http2", "new-connection", "intro"]) if (!(r.byClient[c] > 0)) { console.log("no", c); process.exit(1); }
    require("fs").writeFileSync(`intros-${name}.txt`, r.intros.join("\n") + "\n");
  ' || fail "requests failed during the ${name}s"
  stored_once "intros-$name.txt"
}
under_load restart 5 restart_once
echo "ok: five restarts under load, nothing failed; every acknowledged request stored once"
under_load reload 3 reload_once
echo "ok: three reloads under load, nothing failed, a new main PID each time; every acknowledged request stored once"

# HTTP/3 on the UDP socket citizen-site-quic.socket holds: every answer
# advertises it, a client gets its page over it, and three reloads under
# HTTP/3 load fail no request and store every acknowledged post once. The
# judge is Chromium: a page loaded over h3 runs its own fetch loop through
# the reloads (chromium-quic.mjs; the browser sends again what a GOAWAY
# left unprocessed). The bench's own client, with the same rule, adds
# volume beside it. Their posts are paced to stay under the guide's
# RATE_LIMIT_PER_MINUTE (10 from one address, in a burst of 10), however
# long one process serves: Chromium's once every 10 s and each of the
# bench's 4 visitors' once every 90 s, under 9 a minute in all. (Once
# every 5 s and every 12 s each, 32 a minute, a slow host's process that
# served 25 s while its successor rendered answered a post 429.)
h3=(/live/site/h3-load)
h3_target=(--connect 127.0.0.1:443 --name "$site" --ca ca.pem)
alt=$(curl -sS "${https[@]}" -o /dev/null -w '%header{alt-svc}' "https://$site/pricing")
[ "$alt" = 'h3=":443"; ma=86400' ] || fail "Alt-Svc: $alt"
got=$("${h3[@]}" get "${h3_target[@]}" /pricing) || fail "HTTP/3: $got"
echo "ok: HTTP/3 on UDP 443 ($got)"
rm -f h3-stop chromium-ready
node /live/site/chromium-quic.mjs --origin "https://$site" --cert fullchain.pem \
  --ready chromium-ready --stop-file h3-stop --report report-chromium.json --post-every-ms 10000 &
chromium_pid=$!
for _ in $(seq 600); do [ -e chromium-ready ] && break; kill -0 "$chromium_pid" 2>/dev/null || break; sleep 0.1; done
[ -e chromium-ready ] || fail "Chromium did not load /about over HTTP/3"
"${h3[@]}" load "${h3_target[@]}" --clients 4 --post-every-ms 90000 --stop-file h3-stop --report report-h3.json &
h3_pid=$!
sleep 2
for _ in 1 2 3; do reload_once; sleep 2.5; done
touch h3-stop
wait "$chromium_pid" || fail "Chromium's fetches over HTTP/3 failed during the reloads"
wait "$h3_pid" || fail "the HTTP/3 load stopped with an error"
node -e '
  const fs = require("fs");
  const chromium = JSON.parse(fs.readFileSync("report-chromium.json", "utf8"));
  if (chromium.ok < 100 || !chromium.posted.length || chromium.protocols.some((p) => p !== "h3")) {
    console.log(`Chromium: ${chromium.ok} answered, ${chromium.posted.length} posts, over ${chromium.protocols}`);
    process.exit(1);
  }
  const r = JSON.parse(fs.readFileSync("report-h3.json", "utf8"));
  console.log(`HTTP/3 through 3 reloads: Chromium ${chromium.ok} answered (${chromium.posted.length} posts), ${chromium.failed.length} failed; the bench client ${r.answered} answered, ${r.retried} sent again after a GOAWAY, ${r.failures.length} failed`);
  if (r.failures.length || r.answered < 100) { console.log(r.failures.join("\n")); process.exit(1); }
  fs.writeFileSync("intros-h3.txt", [...chromium.posted, ...r.posted].join("\n") + "\n");
' || fail "requests over HTTP/3 failed during the reloads"
stored_once intros-h3.txt
echo "ok: three reloads under HTTP/3 load, judged by Chromium, nothing failed; every acknowledged request stored once"
node -e '
  const fs = require("fs");
  const of = (name) => JSON.parse(fs.readFileSync(`report-${name}.json`, "utf8"));
  const waits = {};
  for (const name of ["restart", "reload"]) {
    const r = of(name);
    waits[name] = { swaps: r.swaps, requests: r.requests, failed: r.failed, steady: r.latencyMs.steady, during: r.latencyMs.duringSwaps };
  }
  console.log(`worst wait: systemctl restart ${waits.restart.during.max} ms, systemctl reload ${waits.reload.during.max} ms`);
  console.log(`waits: ${JSON.stringify(waits)}`);
'


# The operator's commands as the service's user (docs/operate.md, "Under
# systemd"): the guide's steps run in one shell each, after the step that
# defines `site`, as an operator pastes them into one session.
as_service() { bash -c "$(cat steps/as-the-service.sh steps/$1.sh)"; }
post() {
  curl -sS "${https[@]}" -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
    --data "{\"name\":\"$1\",\"contactPerson\":\"Ana\",\"email\":\"ana@example.org\",\"website\":\"https://example.org\",\"description\":\"Sent around a backup\",\"tags\":[\"Loyalty\"]}" \
    "https://$site/api/save-to-notion"
}
stored_names() { as_service commands | grep -o 'Kept [A-Za-z]*' | sort -u | tr '\n' ' '; }
[ "$(post 'Kept Before')" = 200 ] || fail "the post before the backup"
listed=$(as_service commands) || fail "the guide's commands failed: $listed"
echo "$listed" | grep -q 'Kept Before' || fail "intro list does not show the request: $listed"
echo "$listed" | grep -q -e 'no checkouts recorded' -e 'checkout(s)' || fail "checkouts list said: $listed"
echo "ok: intro, checkouts and team run as the service's user"
said=$(as_service backup) || fail "the guide's backup failed: $said"
echo "$said" | grep -q '^backed up to /var/lib/citizen-site/backup-2026-11-25.db' || fail "backup said: $said"
echo "ok: $said"
[ "$(post 'Kept After')" = 200 ] || fail "the post after the backup"
# Visitors keep arriving during the restore: a page every 50 ms, each
# request's start and end (ms) and status noted (000: the connection was
# refused).
( while [ ! -e visitors.stop ]; do
    start=$(date +%s%3N)
    code=$(curl -sS "${https[@]}" --max-time 10 -o /dev/null -w '%{http_code}' "https://$site/" 2>/dev/null || true)
    echo "$start $(date +%s%3N) ${code:-000}"
    sleep 0.05
  done >visitors.txt ) &
visitors=$!
sleep 1
said=$(bash -c "$(cat steps/as-the-service.sh steps/restore.sh)" 2>&1) || fail "the guide's restore failed: $said"
echo "$said" | grep -q '^restored /var/lib/citizen-site/citizen-site.db from /var/lib/citizen-site/backup-2026-11-25.db' || fail "restore said: $said"
for _ in $(seq 120); do [ "$(systemctl is-active citizen-site)" = active ] && break; sleep 0.5; done
[ "$(systemctl is-active citizen-site)" = active ] || fail "after the restore citizen-site is $(systemctl is-active citizen-site)"
sleep 2
touch visitors.stop
wait $visitors
served=$(grep -c ' 200$' visitors.txt || true)
refused=$(grep -c ' 000$' visitors.txt || true)
other=$( (grep -v -e ' 200$' -e ' 000$' visitors.txt || true) | cut -d' ' -f3 | sort | uniq -c | tr '\n' ' ')
[ -z "$other" ] || fail "visitors got during the restore: $other"
[ "$(tail -n 1 visitors.txt | cut -d' ' -f3)" = 200 ] || fail "the last visitor got $(tail -n 1 visitors.txt)"
# docs/operate.md: new connections are refused for as long as the restore
# takes, under two seconds. At most: from the end of the last page served
# before the first refusal to the start of the first request after the
# last refusal.
window=$(awk '$3 == "000" { if (!seen) before = served_end; seen = 1; after = "" }
  $3 == "200" { served_end = $2; if (seen && after == "") after = $1 }
  END { print (seen ? after - before : 0) }' visitors.txt)
[ "$window" -lt 2000 ] || fail "connections were refused for $window ms (the guide says under two seconds)"
echo "ok: restored with visitors arriving ($served pages served; $refused connections refused, over $window ms, while the sockets were stopped): $(echo "$said" | tr '\n' ' ')"
names=$(stored_names)
[ "$names" = "Kept Before " ] || fail "after the restore the stored requests are '$names' (want the backup's 'Kept Before' and not the later 'Kept After')"
listed=$(bash steps/operate.sh)
echo "$listed" | grep -q 'Live Town' || fail "the requests of the backup are not all back"
pid=$(systemctl show -p MainPID --value citizen-site)
service_uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
owners=$(find /var/lib/private/citizen-site -mindepth 1 -printf '%U %p\n' | grep -v "^$service_uid " || true)
[ -z "$owners" ] || fail "files not owned by the service's user ($service_uid): $owners"
ls /var/lib/private/citizen-site/citizen-site.db.replaced-* >/dev/null || fail "the replaced database was not kept"
[ "$(post 'Kept Later')" = 200 ] || fail "the post after the restore"
names=$(stored_names)
[ "$names" = "Kept Before Kept Later " ] || fail "after a post the stored requests are '$names'"
echo "ok: the backup's requests are back, the later one gone, every file the service's ($service_uid), a new post stored"

# Nothing in the journal at error level: systemd's, or the site's own.
errors=$(journalctl -u citizen-site -u citizen-site.socket -u citizen-site-http.socket -u citizen-site-quic.socket -p err --no-pager -q -o cat || true)
site_errors=$(journalctl -u citizen-site --no-pager -o cat | grep '"level":"ERROR"' || true)
[ -z "$errors$site_errors" ] || fail "the journal holds errors: $errors $site_errors"
echo "ok: no error in the journal"

# The guide's check before a reload, on this running host: every address
# is held (by the server and by systemd's socket units), and check passes,
# naming the server that holds them.
server_pid=$(systemctl show -p MainPID --value citizen-site)
said=$(bash steps/check-before-reload.sh 2>&1) || fail "check on the running host failed: $said"
echo "$said" | grep -q "HTTPS_ADDR=.*: held by this site's running server (pid $server_pid)" || fail "check does not say the server (pid $server_pid) holds HTTPS_ADDR: $said"
echo "$said" | grep -q "ok: citizen-site serve would start" || fail "check: $said"
echo "ok: the guide's check passes on the running host, the addresses held by pid $server_pid"

# The environment file as it is now, applied by a reload (no daemon-reload):
# a changed setting is in force in the new process; a broken one fails the
# reload, naming it, and the old process serves on with its own.
metrics() { curl -sS "${https[@]}" -o /dev/null -w '%{http_code}' "https://$site/metrics"; }
[ "$(metrics)" = 200 ] || fail "/metrics from loopback: $(metrics)"
cp /etc/citizen-site/env env.before
echo 'METRICS_ALLOW=192.0.2.1' >> /etc/citizen-site/env
old=$(systemctl show -p MainPID --value citizen-site)
said=$(systemctl reload citizen-site 2>&1) || fail "a reload with a changed environment file failed: $said"
[ "$(systemctl show -p MainPID --value citizen-site)" != "$old" ] || fail "no new main PID after the reload"
[ "$(metrics)" = 404 ] || fail "after METRICS_ALLOW=192.0.2.1 and a reload, /metrics from loopback: $(metrics)"
echo "ok: a changed environment file is applied by systemctl reload (METRICS_ALLOW: /metrics 200 -> 404)"
cp env.before /etc/citizen-site/env
printf 'MAX_CONNECTIONS=0\nSAMPLE_TEAM=maybe\n' >> /etc/citizen-site/env
old=$(systemctl show -p MainPID --value citizen-site)
# journald files the command's lines late here on purpose, as a busy host
# did: stopped across the reload, and going on a second after it returns.
journald=$(systemctl show -p MainPID --value systemd-journald)
[ "${journald:-0}" -gt 1 ] || fail "no journald to hold (MainPID '$journald')"
trap 'kill -CONT "$journald" 2>/dev/null || true' EXIT
kill -STOP "$journald"
if said=$(systemctl reload citizen-site 2>&1); then kill -CONT "$journald"; fail "a reload with a broken environment file succeeded: $said"; fi
(sleep 1; kill -CONT "$journald") &
[ "$(systemctl show -p MainPID --value citizen-site)" = "$old" ] || fail "the main PID changed on a refused reload"
[ "$(metrics)" = 404 ] || fail "the old process does not serve on with its own settings: /metrics $(metrics)"
journal_says "error: MAX_CONNECTIONS=0: too small: a whole number from 1 to" || fail "the journal does not name MAX_CONNECTIONS=0"
journal_says "error: SAMPLE_TEAM=maybe: not a yes/no value" || fail "the journal does not name SAMPLE_TEAM=maybe"
journal_says "the environment has 2 problem(s): pid $old keeps serving" || fail "the journal does not say the old process serves on"
cp env.before /etc/citizen-site/env
systemctl reload citizen-site || fail "the reload with the file put back failed"
[ "$(metrics)" = 200 ] || fail "after the file was put back, /metrics: $(metrics)"
echo "ok: a broken environment file fails the reload naming both settings, and pid $old serves on"

# The guide's wrapper gives a command the service's settings: `site intro
# retry` reaches for the file's Notion (here one that does not answer)
# instead of saying forwarding is off.
printf 'NOTION_TOKEN=secret_live\nNOTION_DATABASE_ID=db123\nNOTION_API_BASE=http://127.0.0.1:9\n' >> /etc/citizen-site/env
said=$(bash -c "$(cat steps/as-the-service.sh); site intro retry" 2>&1) && fail "intro retry to a Notion that does not answer succeeded: $said"
echo "$said" | grep -q "Notion forwarding is off" && fail "the wrapper did not pass the environment file: $said"
echo "$said" | grep -q "failed" || fail "intro retry said: $said"
cp env.before /etc/citizen-site/env
echo "ok: the operator's wrapper passes the service's settings (intro retry tried Notion)"

# Last (its error is meant): a reload to a binary that exits at once
# reports the failure, and the old process serves on.
install -m 0755 /live/site/citizen-site /usr/local/lib/citizen-site-good
printf '#!/bin/sh\n[ "$1" = upgrade ] && exec /usr/local/lib/citizen-site-good "$@"\nexit 3\n' > /live/site/broken
install -m 0755 /live/site/broken /usr/local/bin/citizen-site
old=$(systemctl show -p MainPID --value citizen-site)
if said=$(systemctl reload citizen-site 2>&1); then fail "a reload to a broken binary succeeded: $said"; fi
[ "$(systemctl show -p MainPID --value citizen-site)" = "$old" ] || fail "the main PID changed on a failed reload"
[ "$(systemctl is-active citizen-site)" = active ] || fail "after a failed reload: $(systemctl is-active citizen-site)"
got=$(curl -sS "${https[@]}" -o /dev/null -w '%{http_code}' "https://$site/about")
[ "$got" = 200 ] || fail "after a failed reload, /about: $got"
journal_says "the upgrade failed, pid $old keeps serving" || fail "the journal does not say why the reload failed"
install -m 0755 /live/site/citizen-site /usr/local/bin/citizen-site
echo "ok: a reload to a binary that exits at once failed, and pid $old serves on"
