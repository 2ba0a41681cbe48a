#!/usr/bin/env bash
# docs/guide.md alone: its blocks run and print what it says (and every page's links hold).
# The whole check, README.md and docs/*.md, is tests/docs_test.sh.
exec bash "$(dirname "$0")/docs_test.sh" docs/guide.md
