#!/usr/bin/env bash
# Sharded `neardup passages index` on Slurm: writes the plan, submits the parts as one job array, the key
# ranges of the posting lists as a second array that starts when every part has completed (afterok), then
# `finish` after the ranges.
#   WORK=/shared/work N=64 [K=64] bash slurm-passages.sh -o /shared/index [passages index options] FILE...
# N: the parts (input-file shards); K: the key ranges (default N). Prints the finish job's id.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?set WORK to the work folder}" "${N:?set N, the parts}"
K=${K:-$N}
${NEARDUP:-neardup} passages stage plan --work "$WORK" --shards "$N" --key-ranges "$K" "$@" >/dev/null
jid=$(sbatch --parsable --export=ALL --array=0-$((N - 1)) "$here/slurm-passages-task.sh" part "$N")
jid=$(sbatch --parsable --export=ALL --dependency=afterok:${jid%%;*} --array=0-$((K - 1)) "$here/slurm-passages-task.sh" lists "$K")
jid=$(sbatch --parsable --export=ALL --dependency=afterok:${jid%%;*} "$here/slurm-passages-task.sh" finish)
echo "${jid%%;*}"
