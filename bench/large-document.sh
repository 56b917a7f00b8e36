#!/bin/bash
# Peak RSS (KB, /usr/bin/time) of the similar and passages commands on FILE (bench/large-document.mjs's
# output), the index commands under --memory ${MEMORY:-256M}. Compare with FILE's last five lines alone.
# The growth figures of docs/memory.md were taken with N=dist/cli/main.js of a build of b4e01f2 (before the
# per-document limits, which now refuse such documents under a small --memory); on a later build the same
# script shows the limits at work (refusals), or measures with MEMORY large enough to take the document.
set -u
N=${N:-$(dirname "$0")/../dist/cli/main.js}; F=$1; T=$(mktemp -d); M=${MEMORY:-256M}
trap 'rm -rf "$T"' EXIT
m() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
tail -5 "$F" > "$T/small.jsonl"
echo "file $F $(stat -c %s "$F") bytes"
echo "similar build  $(m node "$N" similar build "$F" --index "$T/sim" --memory "$M")"
node "$N" similar build "$T/small.jsonl" --index "$T/sim2" 2>/dev/null
echo "similar update $(m node "$N" similar update "$F" --index "$T/sim2" --memory "$M")"
echo "similar query  $(m node "$N" similar query "$F" --index "$T/sim")"
echo "passages index $(m node "$N" passages index -o "$T/pst" --memory "$M" "$F")"
echo "passages pairs $(m node "$N" passages pairs "$T/pst" --memory "$M")"
echo "passages query $(m node "$N" passages query "$T/pst" "$F")"
