#!/usr/bin/env bash
# Installation and embedding: the static example, `make install` into a temporary prefix, a
# program compiled against the installed header and pkg-config file (also where no sqlite3.pc
# exists), and DESTDIR staging.
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

# Without a sqlite3.pc (macOS and many systems ship SQLite without one): only the installed
# rdt.pc and a copy of libsodium.pc are visible, not the system's directories.
mkdir -p "$tmp/pc-no-sqlite"
cp "$(pkg-config --variable=pcfiledir libsodium)/libsodium.pc" "$tmp/pc-no-sqlite/"
no_sqlite_pc() { PKG_CONFIG_LIBDIR="$tmp/pc-no-sqlite" PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" "$@"; }
check "(set-up) in that environment pkg-config finds no sqlite3.pc" \
  sh -c "! PKG_CONFIG_LIBDIR='$tmp/pc-no-sqlite' PKG_CONFIG_PATH= pkg-config --exists sqlite3"
flags=$(no_sqlite_pc pkg-config --cflags --libs --static rdt 2>&1)
expect "without a sqlite3.pc, pkg-config --cflags --libs --static rdt answers, naming -lsqlite3 and -lsodium" \
  "yes" "$(grep -qw -- -lsqlite3 <<<"$flags" && grep -qw -- -lsodium <<<"$flags" && echo yes || echo "$flags")"
check "without a sqlite3.pc, a program compiles and links against the installed copy with those flags" \
  sh -c "cc -std=c11 -o '$tmp/probe-no-sqlite-pc' tests/install_probe.c $flags"
check "... and its rdt_version() is the VERSION file" test "$("$tmp/probe-no-sqlite-pc")" = "$version"
expect "pkg-config --libs rdt (not --static) still names -lsqlite3, as it did when rdt.pc required sqlite3" \
  "yes" "$(no_sqlite_pc pkg-config --libs rdt 2>&1 | grep -qw -- -lsqlite3 && echo yes || echo no)"

check "make install respects DESTDIR (staged under it, paths without it)" \
  sh -c "make --no-print-directory install DESTDIR='$tmp/stage' PREFIX=/opt/rdt >/dev/null &&
         test -f '$tmp/stage/opt/rdt/lib/librdt.a' && test -f '$tmp/stage/opt/rdt/include/rdt.h' &&
         grep -q '^prefix=/opt/rdt\$' '$tmp/stage/opt/rdt/lib/pkgconfig/rdt.pc'"
rm -f dist/rdt.pc # it holds the last PREFIX; the next install rebuilds it

tap_summary
