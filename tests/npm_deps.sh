#!/usr/bin/env bash
# Installs better-sqlite3 into build/node/node_modules for tests/npm_test.sh (.ci/run runs this;
# make test never touches the network). better-sqlite3 is a native module: its prebuilt binary
# cannot be downloaded here, so npm builds it from source with node-gyp (g++, make, python3),
# about a minute of compiling. node-gyp would download Node's headers too, which fails offline:
# it is pointed at the headers the node package installed (/usr/include/node) instead.
# better-sqlite3 12 is the line that supports Node 20 (13 needs Node 22).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1; then
  echo "npm_deps: npm is not installed; tests/npm_test.sh will skip"
  exit 0
fi
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then
  export npm_config_nodedir=/usr
fi
mkdir -p build/node
npm install --prefix build/node --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "better-sqlite3@${RDT_BETTER_SQLITE3:-12}"
node -e "require('$PWD/build/node/node_modules/better-sqlite3')(':memory:').close()"
echo "npm_deps: better-sqlite3 $(node -p "require('$PWD/build/node/node_modules/better-sqlite3/package.json').version") in build/node/node_modules"
