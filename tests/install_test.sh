#!/usr/bin/env bash
# Installation and embedding: the static example, `make install` into a temporary prefix, a
# program compiled against the installed header and pkg-config file, and DESTDIR staging.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/tap.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(cat VERSION)

check "the embedding example (static library, sqlite3_auto_extension) trains and predicts" \
  build/embed tests/data/banknote.csv

check "make install PREFIX=<tmp> installs module, static library, header and rdt.pc" \
  make --no-print-directory install PREFIX="$tmp/prefix"
for f in lib/rdt.so lib/librdt.a include/rdt.h lib/pkgconfig/rdt.pc; do
  check "installed $f" test -f "$tmp/prefix/$f"
done

export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
check "pkg-config --modversion rdt is the VERSION file ($version)" \
  test "$(pkg-config --modversion rdt)" = "$version"
check "a program compiles against the installed header and pkg-config file" \
  sh -c "cc -std=c11 -o '$tmp/probe' tests/install_probe.c \$(pkg-config --cflags --libs --static rdt)"
check "that program's rdt_version() is the VERSION file" test "$("$tmp/probe")" = "$version"
check "the installed loadable module loads in the sqlite3 shell and agrees" \
  test "$(sqlite3 :memory: ".load $tmp/prefix/lib/rdt" "SELECT rdt_version()")" = "$version"

check "make install respects DESTDIR (staged under it, paths without it)" \
  sh -c "make --no-print-directory install DESTDIR='$tmp/stage' PREFIX=/opt/rdt >/dev/null &&
         test -f '$tmp/stage/opt/rdt/lib/librdt.a' && test -f '$tmp/stage/opt/rdt/include/rdt.h' &&
         grep -q '^prefix=/opt/rdt\$' '$tmp/stage/opt/rdt/lib/pkgconfig/rdt.pc'"
rm -f dist/rdt.pc # it holds the last PREFIX; the next install rebuilds it

tap_summary
