#!/usr/bin/env bash
# Sharded `neardup dedup` on Slurm: writes the plan, then submits each stage as a job array that starts when
# the previous one has completed (afterok), so no stage runs on partial data.
#   WORK=/shared/work N=64 M=16 bash slurm-submit.sh [dedup options: --flags F --kept-dir D ...] FILE...
# N: input-file shards (signatures, filter), M: band ranges (buckets). Prints the last job's id.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?set WORK to the work folder}" "${N:?set N, the input-file shards}"
M=${M:-$N}
${NEARDUP:-neardup} dedup-stage plan --work "$WORK" --shards "$N" --band-shards "$M" "$@"
M=$(node -e 'process.stdout.write(String(require(process.argv[1]).bandShards))' "$WORK/plan.json")  # at most the bands
after=()
for spec in "signatures $N" "buckets $M" "verify $N" "clusters 1" "filter $N" "kept 1"; do
  set -- $spec
  jid=$(sbatch --parsable --export=ALL "${after[@]}" --array=0-$(($2 - 1)) "$here/slurm-task.sh" "$1" "$2")
  after=(--dependency=afterok:${jid%%;*})
done
echo "$jid"
