#!/usr/bin/env bash
# Installs a packed tarball the way a user would, on a PATH with no compiler (no cc, g++, make, python), in a
# fresh project under a temporary folder, then requires it, imports it, and runs the CLI. It passes only if the
# prebuild was used: a from-source build would need the compiler that is not there.
#
#   tools/check-tarball.sh neardup-0.1.0.tgz     (make one with `npm pack`, which runs tools/prepack.mjs)
# npm fetches the package's two runtime dependencies from the registry, and the optional better-sqlite3 (whose
# build fails here without a compiler: npm skips it, as it would for a user without one and without GitHub).
set -euo pipefail
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: tools/check-tarball.sh PACKAGE.tgz" >&2; exit 2; }
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "$0")/.." && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/neardup-tarball-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# A PATH of the few programs npm and the CLI need, and nothing that compiles.
mkdir -p "$work/bin" "$work/project"
for tool in node npm npx sh bash env tar gzip gunzip rm mkdir cp mv cat ls chmod ln uname dirname basename sed grep tail head tr cut readlink wc; do
  p="$(command -v "$tool" || true)"
  [ -n "$p" ] && ln -s "$(readlink -f "$p")" "$work/bin/$tool"
done
for tool in cc gcc g++ c++ clang make python3 python; do
  PATH="$work/bin" command -v "$tool" >/dev/null 2>&1 && { echo "check-tarball: $tool is still on PATH" >&2; exit 1; }
done

cd "$work/project"
export PATH="$work/bin" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
printf '{ "name": "tarball-check", "version": "1.0.0", "private": true }\n' > package.json
npm install --no-audit --no-fund "$tarball" 2>&1 | tail -3

where="$(node -p "require('node-gyp-build').resolve(require('path').dirname(require.resolve('neardup/package.json')))")"
case "$where" in
  */prebuilds/*) echo "check-tarball: addon loaded from $where" ;;
  *) echo "check-tarball: addon is not a prebuild: $where" >&2; exit 1 ;;
esac
[ ! -d node_modules/neardup/build ] || { echo "check-tarball: install built the addon (node_modules/neardup/build)" >&2; exit 1; }

node -e "
  const nd = require('neardup');
  const r = nd.shingleHashesSync(['hello'], { unit: 'word', n: 1, hash: 'murmur3_32' });
  if (r.hashes[0] !== 613153351) throw new Error('murmur3_32(hello) = ' + r.hashes[0]);
  console.log('check-tarball: require: ok, runtime', JSON.stringify(nd.runtimeInfo()));
"
node --input-type=module -e "
  import { shingleHashesSync } from 'neardup';
  const r = shingleHashesSync(['hello'], { unit: 'word', n: 1, hash: 'murmur3_32' });
  if (r.hashes[0] !== 613153351) throw new Error('ESM: ' + r.hashes[0]);
  console.log('check-tarball: import: ok');
"
# The CLI on a small corpus: 3 lines, the third a copy of the first (flags: 1 kept, 0 duplicate).
printf '%s\n' '{"text":"the quick brown fox jumps over the lazy dog"}' '{"text":"an entirely different sentence about cats"}' \
  '{"text":"the quick brown fox jumps over the lazy dog"}' > docs.jsonl
npx --no-install neardup dedup docs.jsonl --flags flags.txt > summary.json
flags="$(tr -d '\n' < flags.txt)"
echo "check-tarball: neardup dedup: flags $flags, summary $(cat summary.json | tr -d '\n' | cut -c1-200)"
[ "$flags" = "110" ] || { echo "check-tarball: expected flags 110" >&2; exit 1; }
ls node_modules/neardup/docs/*.md > /dev/null
echo "check-tarball: ok ($(ls node_modules/neardup/prebuilds/*/ | tr '\n' ' '))"
