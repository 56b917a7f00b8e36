#!/usr/bin/env bash
# Sharded `neardup dedup` on Kubernetes: writes the plan (in a pod or anywhere the volume is mounted at the
# same path), then runs each stage as an Indexed Job (k8s-job.yaml) and waits for it to complete before the
# next, so no stage runs on partial data.
#   WORK=/data/work N=64 M=16 IMAGE=registry.example/neardup:0.1 PVC=corpus bash k8s-run.sh [dedup options] FILE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?}" "${N:?}" "${IMAGE:?}" "${PVC:?}"
export WORK IMAGE PVC NEARDUP=${NEARDUP:-neardup}
M=${M:-$N}
$NEARDUP dedup-stage plan --work "$WORK" --shards "$N" --band-shards "$M" "$@"
M=$(node -e 'process.stdout.write(String(require(process.argv[1]).bandShards))' "$WORK/plan.json")  # at most the bands
for spec in "signatures $N" "buckets $M" "verify $N" "clusters 1" "filter $N" "kept 1"; do
  set -- $spec
  export NAME=dedup-$1 COUNT=$2 TASK="dedup-stage $1 --work $WORK"
  kubectl delete job "neardup-$NAME" --ignore-not-found >/dev/null
  envsubst '${NAME} ${TASK} ${COUNT} ${IMAGE} ${PVC} ${NEARDUP}' < "$here/k8s-job.yaml" | kubectl apply -f -
  kubectl wait --for=condition=complete "job/neardup-$NAME" --timeout=24h
done
