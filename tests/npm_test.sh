#!/usr/bin/env bash
# The npm package (npm/, "sqlite-rdt") in better-sqlite3, through tests/npm_test.js. It needs
# node and better-sqlite3 (a native module, built from source here: no prebuilt binary can be
# downloaded), looked for in build/node/node_modules, where .ci/run installs it, and in $NODE_PATH.
# Without either this prints one labelled skip, "ok - ... # SKIP <reason>", counted neither as
# passed nor as failed. Prints "N passed, N failed[, N skipped]".
#   RDT_EXT        the extension, without suffix (default dist/rdt)
#   RDT_SANITIZE=1 it is an ASan build: node runs with the ASan runtime preloaded
set -u
cd "$(dirname "$0")/.."
title="the npm package loads rdt into better-sqlite3 (tests/npm_test.js)"
export NODE_PATH="$PWD/build/node/node_modules${NODE_PATH:+:$NODE_PATH}"
skip() { echo "ok - $title # SKIP $1"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }

command -v node >/dev/null 2>&1 || skip "node is not installed"
node -e "require.resolve('better-sqlite3')" >/dev/null 2>&1 ||
  skip "better-sqlite3 is not installed (bash tests/npm_deps.sh installs it into build/node; .ci/run does)"

node=(node)
if [ "${RDT_SANITIZE:-0}" = 1 ]; then
  node=(env LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)" node)
fi
"${node[@]}" tests/npm_test.js "${RDT_EXT:-./dist/rdt}"
