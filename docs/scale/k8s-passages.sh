#!/usr/bin/env bash
# Sharded `neardup passages index` on Kubernetes: writes the plan (in a pod or anywhere the volume is mounted
# at the same path), runs the parts as one Indexed Job (k8s-job.yaml, N pods) and waits for it to complete,
# then the key ranges of the posting lists as another (K pods, default N), then runs `finish` here.
#   WORK=/data/work N=64 [K=64] IMAGE=registry.example/neardup:0.1 PVC=corpus bash k8s-passages.sh -o /data/index [options] FILE...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${WORK:?}" "${N:?}" "${IMAGE:?}" "${PVC:?}"
K=${K:-$N}
export WORK IMAGE PVC NEARDUP=${NEARDUP:-neardup}
$NEARDUP passages stage plan --work "$WORK" --shards "$N" --key-ranges "$K" "$@" >/dev/null
for stage in part lists; do
  count=$N
  [ "$stage" = lists ] && count=$K
  export NAME=passages-$stage COUNT=$count TASK="passages stage $stage --work $WORK"
  kubectl delete job "neardup-$NAME" --ignore-not-found >/dev/null
  envsubst '${NAME} ${TASK} ${COUNT} ${IMAGE} ${PVC} ${NEARDUP}' < "$here/k8s-job.yaml" | kubectl apply -f -
  kubectl wait --for=condition=complete "job/neardup-$NAME" --timeout=24h
done
$NEARDUP passages stage finish --work "$WORK"
