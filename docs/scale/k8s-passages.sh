#!/usr/bin/env bash
# Sharded `neardup passages index` on Kubernetes: writes the plan (in a pod or anywhere the volume is mounted
# at the same path), runs the parts as one Indexed Job (k8s-job.yaml, N pods), waits for it to complete, then
# runs `finish` here.
#   WORK=/data/work N=64 IMAGE=registry.example/neardup:0.1 PVC=corpus bash k8s-passages.sh -o /data/index [options] FILE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?}" "${N:?}" "${IMAGE:?}" "${PVC:?}"
export WORK IMAGE PVC NEARDUP=${NEARDUP:-neardup}
$NEARDUP passages stage plan --work "$WORK" --shards "$N" "$@" >/dev/null
export NAME=passages-part COUNT=$N TASK="passages stage part --work $WORK"
kubectl delete job "neardup-$NAME" --ignore-not-found >/dev/null
envsubst '${NAME} ${TASK} ${COUNT} ${IMAGE} ${PVC} ${NEARDUP}' < "$here/k8s-job.yaml" | kubectl apply -f -
kubectl wait --for=condition=complete "job/neardup-$NAME" --timeout=24h
$NEARDUP passages stage finish --work "$WORK"
