#!/usr/bin/env bash
# Check the repository as a new user would: clone HEAD into a temporary
# directory and run the README's two commands there, exactly as written.
# Usage: scripts/check-fresh-clone.sh [REF]     (default: HEAD)
set -euo pipefail
ref=${1:-HEAD}
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/migadvisor-fresh.XXXXXX")
trap 'rm -rf "$work"' EXIT
git clone --quiet "$top" "$work/migadvisor"
cd "$work/migadvisor"
git checkout --quiet "$ref"
echo "== fresh clone of $(git rev-parse --short HEAD) in $work/migadvisor"
echo "== make test"
make test
echo "== make demo"
make demo
echo "== fresh clone: make test and make demo passed"
