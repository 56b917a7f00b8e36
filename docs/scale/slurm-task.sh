#!/usr/bin/env bash
# One task of a sharded `neardup dedup` under Slurm: slurm-task.sh STAGE COUNT, run as a job array of COUNT
# tasks (sbatch --array=0-$((COUNT-1))); the array index is the shard. WORK: the work folder (shared file
# system) holding plan.json; NEARDUP: the command (default neardup). Submitted by slurm-submit.sh.
#SBATCH --job-name=neardup-dedup
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=24:00:00
set -euo pipefail
stage=$1 count=$2
: "${WORK:?set WORK to the work folder}"
exec ${NEARDUP:-neardup} dedup-stage "$stage" --work "$WORK" --shard "${SLURM_ARRAY_TASK_ID:-0}/$count"
