#!/usr/bin/env bash
# docs/guide.md stays true: the fenced blocks it marks with <!-- test: sh|sql|python|node --> run
# in order in a scratch directory laid out like the repository (dist/rdt.so, tests/data, python/,
# npm/): the sh blocks with bash, the sql blocks as one sqlite3 session on clinic.db, then the
# python and node blocks; their output is checked. Every relative link must reach a file and a
# heading, and every rdt_*/dp_* function the guide calls must exist. The node block needs
# better-sqlite3 (tests/npm_deps.sh): without it, one labelled skip.
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed[, N skipped]".
#   RDT_EXT        the extension, without suffix (default dist/rdt)
#   RDT_SANITIZE=1 it is an ASan build: every program that loads it gets the ASan runtime preloaded
set -u
cd "$(dirname "$0")/.."
. tests/tap.sh
repo=$PWD
guide=docs/guide.md
ext=${RDT_EXT:-./dist/rdt}
case $ext in /*) ;; *) ext=$repo/$ext ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
skipped=0

preload=()
if [ "${RDT_SANITIZE:-0}" = 1 ]; then
  preload=(env LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)")
  real=$(command -v sqlite3)
  mkdir -p "$tmp/bin"
  printf '#!/bin/sh\nLD_PRELOAD="%s %s" exec "%s" "$@"\n' \
    "$(cc -print-file-name=libasan.so)" "$(cc -print-file-name=libubsan.so)" "$real" >"$tmp/bin/sqlite3"
  chmod +x "$tmp/bin/sqlite3"
  export PATH="$tmp/bin:$PATH"
fi

# The scratch checkout: the guide's paths (./dist/rdt, tests/data/...) work from its root.
work=$tmp/work
mkdir -p "$work/dist" "$work/tests" "$work/python/sqlite_rdt" "$work/npm" "$work/node_modules"
ln -s "$ext.so" "$work/dist/rdt.so"
ln -s "$repo/tests/data" "$work/tests/data"
cp python/sqlite_rdt/__init__.py "$work/python/sqlite_rdt/"
cp npm/index.js npm/package.json "$work/npm/"
ln -s "$work/npm" "$work/node_modules/sqlite-rdt"

# Split the marked blocks into one file per kind, in the guide's order.
awk -v dir="$tmp" '
  /^<!-- test: [a-z]+ -->$/ { kind = $3; want = 1; next }
  want && /^```/ { inside = 1; want = 0; next }
  inside && /^```$/ { inside = 0; next }
  inside { print > (dir "/guide." kind) }
' "$guide"
for kind in sh sql python node; do
  check "the guide marks $kind blocks for testing" test -s "$tmp/guide.$kind"
done

check "the sh blocks run (the key pair is written)" \
  sh -c "cd '$work' && bash '$tmp/guide.sh' && test -s publisher-key.json"
session=$(cd "$work" && sqlite3 clinic.db <"$tmp/guide.sql" 2>&1); rc=$?
expect "the sql blocks run as one sqlite3 session without an error" "0" "$rc"
# ($session, not $out: tap.sh's check() writes $out.)
has() { grep -qE "$1" <<<"$session" && echo yes || echo "no line matching $1 in:"$'\n'"$session"; }
expect "step 2: the typed import stored the labels as integers (762 of class 0, 610 of class 1)" yes \
  "$(grep -qx 'integer|0|762' <<<"$session" && grep -qx 'integer|1|610' <<<"$session" && echo yes || echo "$session")"
expect "step 6: the ledger shows rdt_fit's charge of 1.0 and 1.0 remaining" yes "$(has '^charge\|rdt_fit\|1\.0\|1\.0\|1\.0$')"
expect "step 7: rdt_info shows epsilon 1.0 and release ok" yes \
  "$(grep -qE '^ *epsilon = 1\.0$' <<<"$session" && grep -qE '^ *release = ok$' <<<"$session" && echo yes || echo "$session")"
expect "step 8: an accuracy in [0, 1] and a confusion table over the 274 test rows" yes \
  "$(grep -qE '^(0\.[0-9]+|1\.0)$' <<<"$session" &&
     [ "$(grep -E '^[01]\|[01]\|[0-9]+$' <<<"$session" | awk -F'|' '{ s += $3 } END { print s }')" = 274 ] &&
     echo yes || echo "$session")"
expect "step 8: rdt_predictions gives three rows (id, class, probabilities) of the held-out rows" 3 \
  "$(grep -cE '^(5|10|15)\|[01]\|\{"0":[0-9.e-]+,"1":[0-9.e-]+\}$' <<<"$session")"
check "step 9: the signed model and its JSON export were written" \
  sh -c "test -s '$work/notes-v1.rdt' && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$work/notes-v1.json'"
expect "step 10: rdt_verify is 1 and the prediction is a class" yes \
  "$(grep -qE '^ *verified = 1$' <<<"$session" && grep -qE '^ *predicted = [01]$' <<<"$session" && echo yes || echo "$session")"
check "the ledger's file sits beside the database, as step 5 says" test -s "$work/clinic.db-rdt-ledger"

version=$(cat VERSION)
expect "the python block prints rdt_version() through sqlite_rdt" "$version" \
  "$(cd "$work" && PYTHONPATH="$work/python" "${preload[@]}" /usr/bin/python3 "$tmp/guide.python" 2>&1)"
export NODE_PATH="$repo/build/node/node_modules${NODE_PATH:+:$NODE_PATH}"
if command -v node >/dev/null 2>&1 && node -e "require.resolve('better-sqlite3')" >/dev/null 2>&1; then
  cp "$tmp/guide.node" "$work/guide.js"
  expect "the node block prints rdt_version() through sqlite-rdt and better-sqlite3" "$version" \
    "$(cd "$work" && "${preload[@]}" node guide.js 2>&1)"
else
  echo "ok - the node block prints rdt_version() through sqlite-rdt and better-sqlite3 # SKIP" \
    "node or better-sqlite3 is not installed (bash tests/npm_deps.sh)"
  skipped=$((skipped + 1))
fi

# Relative links: the file exists, and so does the heading an #anchor names (GitHub's slugs).
slugs() { # the anchors of a Markdown file's headings
  grep -E '^#+ ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
bad=
while IFS= read -r link; do
  target=${link%%#*}; anchor=; [ "$target" != "$link" ] && anchor=${link#*#}
  file=$guide; [ -n "$target" ] && file=$(dirname "$guide")/$target
  if [ ! -e "$file" ]; then bad+="$link (no file) "; continue; fi
  if [ -n "$anchor" ] && ! slugs "$file" | grep -qxF -- "$anchor"; then bad+="$link (no heading) "; fi
done < <(grep -oE '\]\([^)]+\)' "$guide" | sed -E 's/^\]\(|\)$//g' | grep -vE '^[a-z]+:')
expect "every relative link of the guide reaches a file and a heading" "" "$bad"

functions=$(sqlite3 :memory: ".load $ext" "SELECT name FROM pragma_function_list UNION SELECT name FROM pragma_module_list")
missing=
for f in $(grep -oE '(^|[^A-Za-z0-9_/.])(rdt|dp)_[a-z_]+[(`]' "$guide" | grep -oE '(rdt|dp)_[a-z_]+' | sort -u); do
  grep -qx "$f" <<<"$functions" || missing+="$f "
done
expect "every rdt_*/dp_* function and table the guide names exists in the extension" "" "$missing"

echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
