#!/usr/bin/env bash
# docs/install.md on a bare Debian 12: debootstrap a minimal bookworm (--variant=minbase: no
# compiler, no Python, no Node) into a scratch directory, copy the source tree into it, and run
# tests/install_docs_test.sh there with RDT_INSTALL_DOCS_FULL=1: every apt-get line of the
# document, the better-sqlite3 install and the system-wide `make install` run for real, from
# nothing. Not part of make test: it needs root, debootstrap (apt-get install debootstrap) and the
# network (a Debian mirror, the npm registry), and takes about ten minutes.
#   RDT_DEBIAN_MIRROR  the mirror (default http://deb.debian.org/debian)
#   RDT_FRESH_KEEP=1   keep the system afterwards (its path is printed)
# Where a proxy re-signs TLS, the certificates named by NODE_EXTRA_CA_CERTS are copied in and
# handed to npm (the machine's setting, not the document's). Prints the test's lines, ending with
# its "N passed, N failed" line, and exits with its status.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fresh_debian: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh_debian: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
mirror=${RDT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /var/tmp/rdt-fresh-debian.XXXXXX)
log=$root.debootstrap.log
cleanup() {
  if mountpoint -q "$root/proc" && ! umount "$root/proc"; then
    echo "# fresh_debian: $root/proc is still mounted: $root left in place" >&2
    return
  fi
  if [ "${RDT_FRESH_KEEP:-0}" = 1 ]; then
    echo "# fresh_debian: the system is kept in $root"
  else
    rm -rf --one-file-system "$root" "$log"
  fi
}
trap cleanup EXIT

echo "# debootstrap --variant=minbase bookworm (log: $log)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$log" 2>&1 ||
  { tail -20 "$log" >&2; exit 1; }
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"

# The source tree: the files git knows of, as they are in the working tree (uncommitted edits and
# new files included), without build products.
mkdir -p "$root/root/rdt"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -c | tar -C "$root/root/rdt" -x

ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/root/extra-ca.crt"
  ca=(NODE_EXTRA_CA_CERTS=/root/extra-ca.crt)
fi

mount -t proc proc "$root/proc"
echo "# RDT_INSTALL_DOCS_FULL=1 bash tests/install_docs_test.sh in the new system"
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${ca[@]}" \
  RDT_INSTALL_DOCS_FULL=1 bash /root/rdt/tests/install_docs_test.sh
