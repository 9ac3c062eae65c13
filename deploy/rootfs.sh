#!/bin/sh
# Lays out the image's whole filesystem in DIR/rootfs: the binary, the shared
# libraries `ldd` names for it (at the paths the loader looks for them), the
# CA certificates, an unprivileged user and the data directory. Nothing else:
# no shell, no package manager. The Containerfile's runtime stage copies it.
#
#   deploy/rootfs.sh target/release/citizen-site DIR
set -eu
bin=${1:?usage: deploy/rootfs.sh BINARY DIR}
out=${2:?usage: deploy/rootfs.sh BINARY DIR}/rootfs
[ -x "$bin" ] || { echo "rootfs.sh: $bin is not an executable" >&2; exit 1; }
ca=/etc/ssl/certs/ca-certificates.crt
[ -f "$ca" ] || { echo "rootfs.sh: $ca is missing (Debian: apt-get install ca-certificates)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/etc/ssl/certs" "$out/data" "$out/tmp"
cp "$bin" "$out/citizen-site"
# Every library with a path, and the dynamic loader itself (the line
# without "=>"), kept at the same path.
ldd "$bin" | awk '/=> \// { print $3 } /^\s*\/[^ ]+ \(/ { print $1 }' | while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
cp "$ca" "$out/etc/ssl/certs/ca-certificates.crt"
# The user the site runs as; the data directory (SQLite, ACME cache) is its own.
printf 'root:x:0:0:root:/:/nonexistent\ncitizen:x:10001:10001:citizen-site:/data:/nonexistent\n' > "$out/etc/passwd"
printf 'root:x:0:\ncitizen:x:10001:\n' > "$out/etc/group"
printf 'hosts: files dns\n' > "$out/etc/nsswitch.conf"
chown 10001:10001 "$out/data" 2>/dev/null || true
chmod 0700 "$out/data"
chmod 1777 "$out/tmp"
