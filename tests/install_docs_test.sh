#!/usr/bin/env bash
# docs/install.md stays true: its fenced blocks marked <!-- test: NAME --> are extracted and run,
# exactly as written, in a scratch copy of the source tree, with HOME pointing into a temporary
# directory (so ~/myapp and $HOME/.local land there). Each route runs in one bash session, its
# blocks sourced in the document's order, so that `cd` and variables carry from one to the next:
#   build   apt-build (checked: its packages are installed), build, shell
#   Python  apt-python (checked likewise), venv, python (written to example.py), python-run,
#           python-can-load; then the document's reasons: Debian's Python is marked externally
#           managed, and an environment without --system-site-packages fails on bdist_wheel
#   Node    apt-node (checked: node and npm), node-dir, node-deps-18 or node-deps-20 (the one for
#           this Node), node-install, node (written to example.js), node-run
#   C       c-install-system (staged under DESTDIR), c-install, c-load, c (written to app.c in
#           a directory of its own), c-build
# Offline (make test never touches the network): pip runs with PIP_NO_INDEX=1, npm with
# npm_config_offline=true, and the better-sqlite3 block is stood in for by the copy that
# tests/npm_deps.sh, which runs the same `npm install better-sqlite3@12`, built into build/node
# (its major version must be the block's). dist/rdt.so and dist/librdt.a are copied with their
# times, so `make` has nothing to do.
# RDT_INSTALL_DOCS_FULL=1 (as root, with network; tests/fresh_debian.sh runs it in a bare Debian
# 12): the apt-get blocks, the better-sqlite3 block and the system-wide install run for real, the
# tree is copied without dist/, and nothing is skipped.
# Skips, each one labelled "ok - ... # SKIP <reason>" and counted neither way: the Python route
# when python3-venv or python3-wheel is not installed (.ci/run installs them), the Node route
# without node, npm or build/node's better-sqlite3 (bash tests/npm_deps.sh).
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/.."
. tests/tap.sh
repo=$PWD
doc=docs/install.md
version=$(cat VERSION)
full=${RDT_INSTALL_DOCS_FULL:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
skipped=0
skip() { echo "ok - $1 # SKIP $2"; skipped=$((skipped + 1)); }
if [ "$full" = 1 ] && [ "$(id -u)" != 0 ]; then
  nok "RDT_INSTALL_DOCS_FULL=1 runs apt-get and make install: it needs root"
  tap_summary
  exit
fi

# ---- the marked blocks, one file each ---------------------------------------------------------
blocks=$tmp/blocks
mkdir -p "$blocks"
awk -v dir="$blocks" '
  /^<!-- test: [a-z0-9-]+ -->$/ { name = $3; want = 1; next }
  want && /^```/ { inside = 1; want = 0; printf "" > (dir "/" name); next }
  inside && /^```$/ { inside = 0; close(dir "/" name); next }
  inside { print >> (dir "/" name) }
' "$doc"
known="apt-build build shell apt-python venv python python-run python-can-load apt-node node-dir
node-deps-18 node-deps-20 node-install node node-run c-install-system c-install c-load c c-build"
marked=$(grep -E '^<!-- test: [a-z0-9-]+ -->$' "$doc" | awk '{ print $3 }')
expect "every block docs/install.md marks is one this test runs, and each is marked once" \
  "$(tr ' ' '\n' <<<"$known" | grep . | sort | tr '\n' ' ')" "$(sort <<<"$marked" | tr '\n' ' ')"
missing=
for b in $known; do [ -s "$blocks/$b" ] || missing+="$b "; done
expect "each of those blocks is a fenced block right after its marker" "" "$missing"

apt_packages() { # the packages an apt-get block installs
  sed -nE 's/^apt-get install +//p' "$blocks/$1" | tr ' ' '\n' | grep -vE '^(-|$)'
}
not_installed() { # the packages of an apt-get block that dpkg does not know as installed
  local p
  for p in $(apt_packages "$1"); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || printf '%s ' "$p"
  done
}

# ---- the scratch tree ----------------------------------------------------------------------
# The source tree as a fresh checkout has it (none of make's, pip's or npm's leftovers); in the
# default mode with the built library and static library, their times kept.
src=$tmp/src
home=$tmp/home
mkdir -p "$src" "$home"
tar -C "$repo" -c --exclude=./.git --exclude=./build --exclude=./dist --exclude=./.venv \
  --exclude=./python/build --exclude='./python/*.egg-info' --exclude=./python/LICENSE \
  --exclude=./python/sqlite_rdt/rdt.so --exclude=./python/sqlite_rdt/rdt.dylib \
  --exclude=./npm/rdt.so --exclude=./npm/rdt.dylib --exclude=./npm/LICENSE \
  --exclude=node_modules --exclude=__pycache__ --exclude='*.db' . | tar -C "$src" -x
if [ "$full" != 1 ]; then
  mkdir -p "$src/dist"
  for f in dist/rdt.so dist/librdt.a; do [ -f "$f" ] && cp -p "$f" "$src/dist/"; done
fi

# A scratch apt configuration that answers yes, for the full mode's apt-get blocks.
printf 'APT::Get::Assume-Yes "true";\n' >"$tmp/apt.conf"

# The default mode's stand-in for the better-sqlite3 block: what `npm install better-sqlite3@N`
# leaves in an empty directory, from the copy tests/npm_deps.sh built (RDT_NODE_MODULES).
emulate_node_deps() {
  mkdir -p node_modules
  cp -R "$RDT_NODE_MODULES/." node_modules/
  printf '{\n  "dependencies": {\n    "better-sqlite3": "^%s"\n  }\n}\n' "$RDT_BETTER_SQLITE3_VERSION" >package.json
}

# route <name> <step>...: runs the steps in one bash session from the scratch tree's root, HOME
# being $home. A step is a block's name (sourced), "write:<block>:<file>" (the block saved as that
# file in the current directory), "home:<dir>" (mkdir -p ~/<dir>, cd there), or
# "emulate-node-deps" (above). Each step's output
# goes to $tmp/<name>.out/<step>, and <step>.ok marks one that finished.
route() {
  local name=$1 step b f out=$tmp/$1.out
  shift
  mkdir -p "$out"
  {
    echo "set -e"
    echo "cd '$src'"
    for step in "$@"; do
      case $step in
        write:*) b=${step#write:}; f=${b#*:}; b=${b%%:*}; echo "cp '$blocks/$b' '$f'" ;;
        home:*) echo "mkdir -p \"\$HOME/${step#home:}\"; cd \"\$HOME/${step#home:}\"" ;;
        emulate-node-deps) echo "emulate_node_deps >'$out/$step' 2>&1" ;;
        *) echo ". '$blocks/$step' >'$out/$step' 2>&1 </dev/null" ;;
      esac
      echo "touch '$out/$step.ok'"
    done
  } >"$tmp/$name.sh"
  (
    export HOME=$home DEBIAN_FRONTEND=noninteractive APT_CONFIG=$tmp/apt.conf PIP_NO_INDEX=1 \
      npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
    [ "$full" = 1 ] || export npm_config_offline=true
    unset DESTDIR PKG_CONFIG_PATH
    [ -n "$route_destdir" ] && export DESTDIR=$route_destdir
    export -f emulate_node_deps
    bash "$tmp/$name.sh"
  )
}
route_destdir=
# report <route> <title prefix> <step>...: one line per step: ran, or where it stopped.
report() {
  local name=$1 what=$2 step b broken=
  shift 2
  for step in "$@"; do
    if [ -n "$broken" ]; then
      nok "$what: $step (not run: $broken failed)"
    elif [ -f "$tmp/$name.out/$step.ok" ]; then
      case $step in
        write:*) b=${step#write:}; ok "$what: the ${b%%:*} block saved as ${b#*:}" ;;
        home:*) ok "$what: a directory ~/${step#home:} for it" ;;
        *) ok "$what: $step runs" ;;
      esac
    else
      [ -f "$tmp/$name.out/$step" ] && tail -15 "$tmp/$name.out/$step" | sed 's/^/#   /'
      nok "$what: $step runs"
      broken=$step
    fi
  done
}
output() { cat "$tmp/$1.out/$2" 2>/dev/null; }

# ---- build ---------------------------------------------------------------------------------
if [ "$full" = 1 ]; then
  route build apt-build build shell
  report build "build" apt-build build shell
else
  route build build shell
  expect "build: the packages of apt-build are installed here ($(apt_packages apt-build | xargs))" \
    "" "$(not_installed apt-build)"
  report build "build" build shell
fi
expect "build: the shell block prints rdt_version() ($version)" "$version" "$(output build shell)"
check "build: make built dist/rdt.so" test -f "$src/dist/rdt.so"

# ---- Python --------------------------------------------------------------------------------
py_steps=(venv write:python:example.py python-run python-can-load)
py_missing=
[ -x /usr/bin/python3 ] || py_missing="/usr/bin/python3 "
[ "$full" = 1 ] || py_missing+=$(not_installed apt-python)
if [ "$full" != 1 ] && [ -n "$py_missing" ]; then
  skip "Python: the venv route (docs/install.md)" \
    "not installed: ${py_missing% } (apt-get install $(apt_packages apt-python | xargs); .ci/run installs them)"
else
  [ "$full" = 1 ] && py_steps=(apt-python "${py_steps[@]}")
  route python "${py_steps[@]}"
  report python "Python" "${py_steps[@]}"
  lines=$(output python python-run)
  loaded=$(head -n 1 <<<"$lines")
  case $loaded in
    "$src"/.venv/lib/python3*/site-packages/sqlite_rdt/rdt.so) where=venv ;;
    *) where="elsewhere: $loaded" ;;
  esac
  expect "Python: example.py loads the library installed inside the environment" venv "$where"
  expect "Python: ... and prints rdt_version() ($version)" "$version" "$(sed -n 2p <<<"$lines")"
  expect "Python: the environment's Python can load extensions (python-can-load prints True)" \
    True "$(output python python-can-load)"
  # The document's reasons. Debian's Python is marked externally managed (PEP 668: pip refuses).
  check "Python: Debian's /usr/bin/python3 is marked EXTERNALLY-MANAGED (why the environment)" \
    /usr/bin/python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'
  # An environment without --system-site-packages has no wheel: the error the document names.
  plain=$tmp/plain-venv
  out=$(cd "$src" && /usr/bin/python3 -m venv "$plain" 2>&1 &&
        PIP_NO_INDEX=1 HOME=$home "$plain/bin/pip" install --no-build-isolation ./python 2>&1)
  expect "Python: without --system-site-packages, pip install --no-build-isolation fails on bdist_wheel" \
    yes "$(grep -q "invalid command 'bdist_wheel'" <<<"$out" && echo yes || echo "$out")"
fi

# ---- Node ----------------------------------------------------------------------------------
node_title="Node: the better-sqlite3 route (docs/install.md)"
if [ "$full" = 1 ]; then # Node's version decides the next block: install it first
  route node-apt apt-node
  report node-apt "Node" apt-node
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$full" = 1 ] && expect "Node: Debian 12's nodejs is Node 18, as the document says" 18 "$node_major"
if [ "$node_major" -ge 20 ]; then deps=node-deps-20; else deps=node-deps-18; fi
deps_major=$(grep -oE 'better-sqlite3@[0-9]+' "$blocks/$deps" | head -n 1 | cut -d@ -f2)
have=$(node -p "require('$repo/build/node/node_modules/better-sqlite3/package.json').version" 2>/dev/null)
export RDT_NODE_MODULES=$repo/build/node/node_modules RDT_BETTER_SQLITE3_VERSION=$have
if [ "$full" != 1 ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
  skip "$node_title" "node or npm is not installed (apt-get install $(apt_packages apt-node | xargs))"
elif [ "$full" != 1 ] && [ "$node_major" -lt 18 ]; then
  skip "$node_title" "Node $node_major is older than the document's oldest (18)"
elif [ "$full" != 1 ] && [ -z "$have" ]; then
  skip "$node_title" "better-sqlite3 is not installed in build/node (bash tests/npm_deps.sh; .ci/run runs it)"
elif [ "$full" != 1 ] && [ "${have%%.*}" != "$deps_major" ]; then
  skip "$node_title" "build/node holds better-sqlite3 $have; the document's line for Node $node_major is $deps_major (RDT_BETTER_SQLITE3=$deps_major bash tests/npm_deps.sh)"
else
  if [ "$full" = 1 ]; then
    node_steps=(node-dir "$deps" node-install write:node:example.js node-run)
  else
    expect "Node: tests/npm_deps.sh installs the block's better-sqlite3 line ($deps: @$deps_major)" \
      "$deps_major" "$(grep -oE 'RDT_BETTER_SQLITE3:-[0-9]+' tests/npm_deps.sh | cut -d- -f2)"
    node_steps=(node-dir emulate-node-deps node-install write:node:example.js node-run)
  fi
  route node "${node_steps[@]}"
  report node "Node" "${node_steps[@]}"
  lines=$(output node node-run)
  expect "Node: example.js loads the copy inside node_modules (--install-links)" \
    "$home/myapp/node_modules/sqlite-rdt/rdt.so" "$(head -n 1 <<<"$lines")"
  expect "Node: ... and prints rdt_version() ($version)" "$version" "$(sed -n 2p <<<"$lines")"
fi
other=node-deps-20; [ "$deps" = node-deps-20 ] && other=node-deps-18
echo "# (Node $node_major: $deps is its block; $other was not run)"

# ---- C -------------------------------------------------------------------------------------
# The system-wide block runs as written; in the default mode DESTDIR (which make reads from the
# environment, as the document's note says) stages it under the scratch directory.
if [ "$full" = 1 ]; then
  c_steps=(c-install-system c-install c-load home:capp write:c:app.c c-build)
  route c "${c_steps[@]}"
  stage=
else
  c_steps=(c-install-system c-install c-load home:capp write:c:app.c c-build)
  route_destdir=$tmp/stage route c c-install-system
  route_destdir= route c c-install c-load home:capp write:c:app.c c-build
  stage=$tmp/stage
fi
report c "C" "${c_steps[@]}"
missing=
for f in lib/rdt.so lib/librdt.a include/rdt.h lib/pkgconfig/rdt.pc; do
  [ -f "$stage/usr/local/$f" ] || missing+="$f "
done
expect "C: the system-wide block installs into ${stage}/usr/local" "" "$missing"
expect "C: ... with prefix=/usr/local in its rdt.pc" "prefix=/usr/local" \
  "$(grep '^prefix=' "$stage/usr/local/lib/pkgconfig/rdt.pc" 2>/dev/null)"
if [ "$full" = 1 ]; then
  expect "C: the system-wide module loads as .load /usr/local/lib/rdt" "$version" \
    "$(sqlite3 :memory: ".load /usr/local/lib/rdt" "SELECT rdt_version();" 2>&1)"
fi
missing=
for f in lib/rdt.so lib/librdt.a include/rdt.h lib/pkgconfig/rdt.pc; do
  [ -f "$home/.local/$f" ] || missing+="$f "
done
expect "C: make install PREFIX=\$HOME/.local installs module, static library, header and rdt.pc" "" "$missing"
expect "C: the installed module loads in the shell (c-load prints $version)" "$version" "$(output c c-load)"
expect "C: app.c, built with pkg-config --static and PKG_CONFIG_PATH, prints rdt $version" \
  "rdt $version" "$(output c c-build)"
check "C: ... and app is linked statically against rdt (no rdt.so among its libraries)" \
  sh -c "test -x '$home/capp/app' && ! ldd '$home/capp/app' | grep -q 'rdt\\.so'"

# ---- the document's links --------------------------------------------------------------------
slugs() { # the anchors of a Markdown file's headings (GitHub's)
  grep -E '^#+ ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
bad=
while IFS= read -r link; do
  target=${link%%#*}; anchor=; [ "$target" != "$link" ] && anchor=${link#*#}
  file=$doc; [ -n "$target" ] && file=$(dirname "$doc")/$target
  if [ ! -e "$file" ]; then bad+="$link (no file) "; continue; fi
  if [ -n "$anchor" ] && ! slugs "$file" | grep -qxF -- "$anchor"; then bad+="$link (no heading) "; fi
done < <(grep -oE '\]\([^)]+\)' "$doc" | sed -E 's/^\]\(|\)$//g' | grep -vE '^[a-z]+:')
expect "every relative link of docs/install.md reaches a file and a heading" "" "$bad"

echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
