#!/usr/bin/env bash
# Build rdt and run the curator's walk-through (examples/walkthrough.sql) on a scratch database.
# Usage, from anywhere: bash examples/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages needed to build and run the demo.
packages=(gcc make pkg-config sqlite3 libsqlite3-dev libsodium-dev)

missing=()
for pkg in "${packages[@]}"; do
    case "$pkg" in
        gcc|make|pkg-config|sqlite3) command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg") ;;
        *) dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg") ;;
    esac
done

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "Installing: ${missing[*]}"
        apt-get update
        apt-get install -y "${missing[@]}"
    else
        echo "Missing: ${missing[*]}. Install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

make
# The walk-through needs a database file (its ledger keeps the charges in a file beside it): a
# private scratch directory outside the checkout, removed at the end.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
sqlite3 "$scratch/demo.db" < examples/walkthrough.sql
