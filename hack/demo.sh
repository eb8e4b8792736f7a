#!/usr/bin/env bash
# The podpilot demo on a local control plane. Today it shows the foundation:
# the real control plane comes up, a Deployment runs on the kwok node, and
# podpilot starts against the cluster and answers its health checks. The
# metrics API and autoscaling parts of the demo come with those features.
#
# KEEP=1 leaves the cluster and podpilot running and prints how to use them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE=${PODPILOT_STATE_DIR:-$PODPILOT_ROOT/_output/demo-cluster}
export PODPILOT_STATE_DIR=$STATE
"$PODPILOT_ROOT/hack/local-down.sh" "$STATE" >/dev/null 2>&1 || true
"$PODPILOT_ROOT/hack/local-up.sh"
# shellcheck disable=SC1091
source "$STATE/env"
if [[ ${KEEP:-0} != 1 ]]; then trap '"$PODPILOT_ROOT/hack/local-down.sh" "$STATE"' EXIT; fi

port=$(( 30000 + RANDOM % 20000 ))
setsid "$PODPILOT_ROOT/bin/podpilot" --secure-port "$port" --bind-address 127.0.0.1 \
  --lister-kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" \
  --authorization-kubeconfig "$KUBECONFIG" >"$STATE/logs/podpilot.log" 2>&1 </dev/null &
echo $! >"$STATE/pids/podpilot.pid"

kubectl create deployment vg1-vanguard --image registry.invalid/vanguard:1 --replicas 2 -o name
kubectl patch deployment vg1-vanguard --type merge -p "{\"spec\":{\"template\":{\"spec\":{\"nodeName\":\"$KWOK_NODE\"}}}}" -o name
kubectl rollout status deployment vg1-vanguard --timeout 60s
kubectl get nodes,pods -o wide

for _ in $(seq 1 60); do
  if [[ $(curl -sk "https://127.0.0.1:$port/readyz" || true) == ok ]]; then break; fi
  sleep 0.5
done
status=$(curl -sk "https://127.0.0.1:$port/readyz" || true)
log "podpilot /readyz on 127.0.0.1:$port: ${status:-no answer} (log: $STATE/logs/podpilot.log)"
[[ $status == ok ]] || die "podpilot did not become ready"
if [[ ${KEEP:-0} == 1 ]]; then
  cat <<EOT

The cluster and podpilot keep running. Try:
  source $STATE/env
  kubectl get pods -o wide
  curl -k https://127.0.0.1:$port/readyz
Stop everything with: hack/local-down.sh $STATE
EOT
fi
