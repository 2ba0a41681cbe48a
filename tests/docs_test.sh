#!/usr/bin/env bash
# The README and docs/*.md stay true: every sql, sh, python and js block runs (or is marked
# <!-- not run: reason --> and reported as a skip), the workflow prints what the pages say, every
# relative link and anchor of every tracked Markdown file resolves, and every rdt_*/dp_* name exists.
# How: tests/docs_test.py (its docstring). Arguments: pages to run (default README.md and docs/*.md).
# Prints "ok - ..." / "not ok - ..." and "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/.."
exec python3 tests/docs_test.py "$@"
