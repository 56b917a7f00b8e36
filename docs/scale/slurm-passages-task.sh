#!/usr/bin/env bash
# One task of a sharded `neardup passages index` under Slurm: `slurm-passages-task.sh part N` (or `lists K`),
# run as a job array of N (K) tasks (sbatch --array=0-$((N-1))), the array index being the part (the key
# range); or `slurm-passages-task.sh finish`, one job. WORK: the work folder (shared file system) holding
# passages-plan.json; NEARDUP: the command (default neardup). Submitted by slurm-passages.sh.
#SBATCH --job-name=neardup-passages
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=24:00:00
set -euo pipefail
: "${WORK:?set WORK to the work folder}"
case $1 in
  part | lists) exec ${NEARDUP:-neardup} passages stage "$1" --work "$WORK" --shard "${SLURM_ARRAY_TASK_ID:-0}/$2";;
  finish) exec ${NEARDUP:-neardup} passages stage finish --work "$WORK";;
  *) echo "usage: slurm-passages-task.sh part N | lists K | finish" >&2; exit 2;;
esac
