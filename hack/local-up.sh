#!/usr/bin/env bash
# Starts a real local control plane for podpilot's tests and demo:
# etcd, kube-apiserver (with the aggregation layer), kube-controller-manager
# (HPA controller on, short sync period), Prometheus, and one node:
#
#   PODPILOT_NODE=kwok (default): kwok with a fake node, for scale. No
#     kube-scheduler runs: workloads set spec.nodeName to the kwok node
#     ($KWOK_NODE in the env file).
#   PODPILOT_NODE=real: a real node (hack/lib-node.sh): containerd, a
#     kubelet, kube-proxy and kube-scheduler on a bridge the cluster creates;
#     real containers from images built offline (hack/build-image.sh). Needs
#     root and `make node-tools`. The control plane and Prometheus listen on
#     the node's address instead of 127.0.0.1, so that pods reach them, and
#     Prometheus finds pods and the kubelet's cAdvisor through the API.
#
# Everything lives under PODPILOT_STATE_DIR (default _output/local-cluster):
# certificates, data, logs, pids, kubeconfig and an env file that tells how to
# reach it. Ports are picked free at start, so two runs on one machine do not
# collide. hack/local-down.sh stops exactly the processes started here.
#
# Environment:
#   PODPILOT_STATE_DIR           state directory (created; must not hold a running cluster)
#   PODPILOT_NODE                kwok (default) or real
#   PODPILOT_BACKEND             what podpilot queries (BACKEND_URL in the env file),
#                                all on loopback beside the local Prometheus:
#     prometheus (default): the local Prometheus itself.
#     victoriametrics: VictoriaMetrics' single-node server scraping the same
#       targets with Prometheus' scrape config, at its default query flags
#       (VICTORIAMETRICS: its binary, default the one `hack/build-tools.sh
#       backends` built; /usr/bin/victoria-metrics is Debian's, the floor).
#     thanos: a Thanos sidecar over the local Prometheus (which gets the
#       external label replica="0") and a Thanos querier over the sidecar's
#       store API (`hack/build-tools.sh backends`).
#   HPA_SYNC_PERIOD              kube-controller-manager HPA sync period (default 5s)
#   HPA_DOWNSCALE_STABILIZATION  its downscale stabilization window (default 30s)
#   PROMETHEUS_SCRAPE_INTERVAL   Prometheus scrape interval (default 1s)
#   KWOK_NODE_PODS               pods the fake node can hold (default 500)
#   KCM_KUBE_API_QPS             kube-controller-manager's --kube-api-qps (default 20, its own default)
#   KCM_KUBE_API_BURST           its --kube-api-burst (default 30, its own default)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-node.sh"

STATE=${PODPILOT_STATE_DIR:-$PODPILOT_ROOT/_output/local-cluster}
HPA_SYNC_PERIOD=${HPA_SYNC_PERIOD:-5s}
HPA_DOWNSCALE_STABILIZATION=${HPA_DOWNSCALE_STABILIZATION:-30s}
PROMETHEUS_SCRAPE_INTERVAL=${PROMETHEUS_SCRAPE_INTERVAL:-1s}
KWOK_NODE_PODS=${KWOK_NODE_PODS:-500}
KCM_KUBE_API_QPS=${KCM_KUBE_API_QPS:-20}
KCM_KUBE_API_BURST=${KCM_KUBE_API_BURST:-30}
KWOK_NODE=kwok-node-0
PODPILOT_NODE=${PODPILOT_NODE:-kwok}
PODPILOT_BACKEND=${PODPILOT_BACKEND:-prometheus}
VICTORIAMETRICS=${VICTORIAMETRICS_BIN:-$VICTORIAMETRICS}
# Where the control plane and Prometheus listen: loopback with kwok, the
# node's address (set by node_names) with a real node.
HOST=127.0.0.1
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || echo /usr/bin/prometheus)}

# start NAME BINARY ARGS... runs BINARY in its own session, logging to
# logs/NAME.log, and records its pid in pids/NAME.pid.
start() {
  local name=$1; shift
  setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name.pid"
  log "started $name (pid $!, log $STATE/logs/$name.log)"
}

# wait_for NAME CMD... retries CMD until it succeeds (60s), failing with NAME's log tail.
wait_for() {
  local name=$1; shift
  for _ in $(seq 1 240); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    local pid; pid=$(cat "$STATE/pids/$name.pid")
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$STATE/logs/$name.log" >&2
      die "$name exited during start-up (log: $STATE/logs/$name.log)"
    fi
    sleep 0.25
  done
  tail -n 30 "$STATE/logs/$name.log" >&2
  die "$name not ready after 60s (log: $STATE/logs/$name.log)"
}

# cert NAME CN ORG CA [SAN]: a key and a certificate signed by CA (client and server use).
cert() {
  local name=$1 cn=$2 org=$3 ca=$4 san=${5:-}
  local subj="/CN=$cn"; [[ -n $org ]] && subj="/O=$org$subj"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  local ext="$PKI/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=clientAuth,serverAuth"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } >"$ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial \
    -days 365 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

ca() {
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$PKI/$1.key" -subj "/CN=$2" \
    -days 365 -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$PKI/$1.crt" 2>/dev/null
}

gen_pki() {
  PKI=$STATE/pki
  mkdir -p "$PKI"
  ca ca podpilot-local-ca
  ca front-proxy-ca podpilot-local-front-proxy-ca
  cert apiserver kube-apiserver "" ca "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.0.0.1,IP:$HOST"
  cert admin admin system:masters ca
  cert controller-manager system:kube-controller-manager "" ca
  cert kwok kwok system:masters ca
  cert front-proxy-client front-proxy-client "" front-proxy-ca
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  if [[ $PODPILOT_NODE == real ]]; then node_pki; fi
}

# kubeconfig NAME USER writes kubeconfig NAME.kubeconfig authenticating with USER's certificate.
kubeconfig() {
  cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $APISERVER_URL
    certificate-authority: $STATE/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $STATE/pki/$2.crt
    client-key: $STATE/pki/$2.key
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
EOF
}

kapi() {
  curl -sf --cacert "$STATE/pki/ca.crt" --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" "$@"
}

start_etcd() {
  start etcd "$ETCD" --name local --data-dir "$STATE/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --log-level warn
  wait_for etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
  local p=$STATE/pki node=()
  # A real node: the kubelet's serving certificate is verified, its address
  # (never its name: that would ask the machine's resolver) is used for logs
  # and exec, and the kubernetes Service gets the node address as endpoint.
  if [[ $PODPILOT_NODE == real ]]; then
    node=(--kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$p/ca.crt"
      --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key"
      --endpoint-reconciler-type lease)
  else
    node=(--endpoint-reconciler-type none)
  fi
  start kube-apiserver "$KUBE_APISERVER" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$HOST" --secure-port "$APISERVER_PORT" --advertise-address "$HOST" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --api-audiences https://kubernetes.default.svc \
    --authorization-mode Node,RBAC --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --requestheader-client-ca-file "$p/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$p/front-proxy-client.crt" --proxy-client-key-file "$p/front-proxy-client.key" \
    --enable-aggregator-routing=true --profiling=false "${node[@]}"
  wait_for kube-apiserver kapi "$APISERVER_URL/readyz"
}

start_controller_manager() {
  local kc=$STATE/controller-manager.kubeconfig
  start kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig "$kc" \
    --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
    --controllers '*,-nodeipam,-nodelifecycle' --use-service-account-credentials=true \
    --service-account-private-key-file "$STATE/pki/sa.key" --root-ca-file "$STATE/pki/ca.crt" \
    --horizontal-pod-autoscaler-sync-period "$HPA_SYNC_PERIOD" \
    --horizontal-pod-autoscaler-downscale-stabilization "$HPA_DOWNSCALE_STABILIZATION" \
    --concurrent-deployment-syncs 10 --concurrent-replicaset-syncs 10 --profiling=false \
    --kube-api-qps "$KCM_KUBE_API_QPS" --kube-api-burst "$KCM_KUBE_API_BURST"
  wait_for kube-controller-manager curl -sfk "https://127.0.0.1:$KCM_PORT/healthz"
}

start_kwok() {
  start kwok "$KWOK" --kubeconfig "$STATE/kwok.kubeconfig" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --cidr 10.0.0.1/24 --node-ip 10.0.0.1 --server-address "127.0.0.1:$KWOK_PORT"
  kapi -X POST -H 'Content-Type: application/json' "$APISERVER_URL/api/v1/nodes" -d @- >/dev/null <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$KWOK_NODE",
 "annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},
 "labels":{"type":"kwok","kubernetes.io/hostname":"$KWOK_NODE","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}},
 "status":{"allocatable":{"cpu":"64","memory":"256Gi","pods":"$KWOK_NODE_PODS"},"capacity":{"cpu":"64","memory":"256Gi","pods":"$KWOK_NODE_PODS"}}}
EOF
  wait_for kwok node_ready
}

node_ready() {
  kapi "$APISERVER_URL/api/v1/nodes/$KWOK_NODE" | grep -q '"reason": "KubeletReady"'
}

start_prometheus() {
  mkdir -p "$STATE/prometheus/targets"
  cat >"$STATE/prometheus/prometheus.yml" <<EOF
global:
  scrape_interval: $PROMETHEUS_SCRAPE_INTERVAL
  evaluation_interval: $PROMETHEUS_SCRAPE_INTERVAL
$(external_labels)
scrape_configs:
- job_name: podpilot-test
  honor_labels: true
  file_sd_configs:
  - files: ['$STATE/prometheus/targets/*.json']
    refresh_interval: 1s
EOF
  if [[ $PODPILOT_NODE == real ]]; then
    prometheus_node_jobs >>"$STATE/prometheus/prometheus.yml"
    PROMETHEUS=$PROMETHEUS_NODE
  fi
  start prometheus "$PROMETHEUS" --config.file "$STATE/prometheus/prometheus.yml" \
    --storage.tsdb.path "$STATE/prometheus/data" --web.listen-address "$HOST:$PROMETHEUS_PORT" \
    --web.enable-lifecycle --log.level warn
  wait_for prometheus curl -sf "http://$HOST:$PROMETHEUS_PORT/-/ready"
}

# external_labels prints Prometheus' external labels: a Thanos sidecar
# refuses a Prometheus without any; the querier deduplicates by replica.
external_labels() {
  if [[ $PODPILOT_BACKEND == thanos ]]; then printf '  external_labels:\n    replica: "0"'; fi
}

# start_backend starts what PODPILOT_BACKEND names beside the local
# Prometheus (after it is ready) and sets BACKEND_URL, the URL podpilot's
# --prometheus-url takes.
start_backend() {
  case $PODPILOT_BACKEND in
    prometheus) BACKEND_URL=http://$HOST:$PROMETHEUS_PORT ;;
    victoriametrics)
      # VictoriaMetrics reads Prometheus' scrape config, but rejects the
      # fields it does not know (evaluation_interval, file_sd's
      # refresh_interval) unless told, and reads file_sd every minute unless
      # told: those two flags are scrape-side, every query flag is its default.
      start victoriametrics "$VICTORIAMETRICS" -promscrape.config "$STATE/prometheus/prometheus.yml" \
        -promscrape.config.strictParse=false -promscrape.fileSDCheckInterval 1s \
        -storageDataPath "$STATE/victoriametrics" -httpListenAddr "$HOST:$BACKEND_PORT" -loggerLevel WARN
      BACKEND_URL=http://$HOST:$BACKEND_PORT
      wait_for victoriametrics curl -sf "$BACKEND_URL/health"
      ;;
    thanos)
      start thanos-sidecar "$THANOS" sidecar --prometheus.url "http://$HOST:$PROMETHEUS_PORT" \
        --tsdb.path "$STATE/prometheus/data" --grpc-address "$HOST:$SIDECAR_GRPC_PORT" \
        --http-address "$HOST:$SIDECAR_HTTP_PORT" --log.level warn
      wait_for thanos-sidecar curl -sf "http://$HOST:$SIDECAR_HTTP_PORT/-/ready"
      mkdir -p "$STATE/thanos"
      start thanos-query "$THANOS" query --http-address "$HOST:$BACKEND_PORT" \
        --grpc-address "$HOST:$QUERY_GRPC_PORT" --endpoint "$HOST:$SIDECAR_GRPC_PORT" \
        --query.replica-label replica --query.active-query-path "$STATE/thanos" --log.level warn
      BACKEND_URL=http://$HOST:$BACKEND_PORT
      wait_for thanos-query curl -sf "$BACKEND_URL/-/ready"
      ;;
  esac
}

write_env() {
  cat >"$STATE/env" <<EOF
# Source this file to use the local cluster started by hack/local-up.sh.
export KUBECONFIG=$STATE/admin.kubeconfig
export PATH=$(dirname "$KUBECTL"):\$PATH
export PODPILOT_STATE_DIR=$STATE
export APISERVER_URL=$APISERVER_URL
export PROMETHEUS_URL=http://$HOST:$PROMETHEUS_PORT
export PROMETHEUS_TARGETS_DIR=$STATE/prometheus/targets
export PODPILOT_BACKEND=$PODPILOT_BACKEND
export BACKEND_URL=$BACKEND_URL
export KCM_PORT=$KCM_PORT
export PODPILOT_NODE=$PODPILOT_NODE
EOF
  if [[ $PODPILOT_NODE == real ]]; then
    cat >>"$STATE/env" <<EOF
export NODE_NAME=$NODE_NAME
export NODE_IP=$NODE_IP
export POD_CIDR=$POD_CIDR
export CONTAINERD_ADDRESS=$CONTAINERD_SOCK
export GUARD_CHAIN=$GUARD_CHAIN
export PROMETHEUS_CLUSTER_URL=$PROMETHEUS_CLUSTER_URL
EOF
  else
    echo "export KWOK_NODE=$KWOK_NODE" >>"$STATE/env"
  fi
}

main() {
  command -v "$PROMETHEUS" >/dev/null || die "prometheus not found: run 'make tools' (installs Debian's prometheus)"
  for b in "$ETCD" "$KUBE_APISERVER" "$KUBE_CONTROLLER_MANAGER" "$KUBECTL" "$KWOK"; do
    [[ -x $b ]] || die "$b is missing: run 'make tools'"
  done
  # Every kubectl below (and in lib-node.sh) is the pinned one.
  PATH=$(dirname "$KUBECTL"):$PATH
  case $PODPILOT_NODE in
    kwok) ;;
    real) node_check ;;
    *) die "PODPILOT_NODE=$PODPILOT_NODE: want kwok or real" ;;
  esac
  case $PODPILOT_BACKEND in
    prometheus) ;;
    victoriametrics) [[ -x $VICTORIAMETRICS ]] || die "$VICTORIAMETRICS is missing: run 'hack/build-tools.sh backends'" ;;
    thanos) [[ -x $THANOS ]] || die "$THANOS is missing: run 'hack/build-tools.sh backends'" ;;
    *) die "PODPILOT_BACKEND=$PODPILOT_BACKEND: want prometheus, victoriametrics or thanos" ;;
  esac
  if [[ -d $STATE/pids ]] && compgen -G "$STATE/pids/*.pid" >/dev/null; then
    die "$STATE already holds a cluster: run hack/local-down.sh first"
  fi
  rm -rf "$STATE"
  mkdir -p "$STATE/logs" "$STATE/pids"
  STATE=$(cd "$STATE" && pwd)
  local begin=$SECONDS
  take_ports ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT KWOK_PORT PROMETHEUS_PORT \
    BACKEND_PORT SIDECAR_GRPC_PORT SIDECAR_HTTP_PORT QUERY_GRPC_PORT
  if [[ $PODPILOT_NODE == real ]]; then
    node_names
    HOST=$NODE_IP
    take_ports KUBELET_PORT KUBELET_HEALTHZ_PORT SCHEDULER_PORT KUBE_PROXY_HEALTHZ_PORT KUBE_PROXY_METRICS_PORT
  fi
  APISERVER_URL=https://$HOST:$APISERVER_PORT
  # On any failure, a failed command (ERR) or a die (its exit 1), stop what started, so
  # that the next start-up does not find a half-started cluster in its way.
  trap 'log "start-up failed; stopping what started"; "$PODPILOT_ROOT/hack/local-down.sh" "$STATE" || true; trap - EXIT' ERR
  trap 'rc=$?; if [[ $rc != 0 ]]; then log "start-up failed; stopping what started"; "$PODPILOT_ROOT/hack/local-down.sh" "$STATE" || true; fi' EXIT
  if [[ $PODPILOT_NODE == real ]]; then
    node_take_lock
    # The guards come first: nothing starts before they count and drop.
    node_guards_up
  fi
  gen_pki
  kubeconfig admin admin
  kubeconfig controller-manager controller-manager
  kubeconfig kwok kwok
  if [[ $PODPILOT_NODE == real ]]; then
    kubeconfig kubelet kubelet
    kubeconfig kube-proxy kube-proxy
    kubeconfig scheduler scheduler
  fi
  start_etcd
  start_prometheus &
  local prom=$!
  start_apiserver
  start_controller_manager
  if [[ $PODPILOT_NODE == real ]]; then node_start; else start_kwok; fi
  wait "$prom"
  start_backend
  write_env
  trap - ERR EXIT
  log "local cluster ready in $((SECONDS - begin))s"
  cat >&2 <<EOF

  source $STATE/env          # sets KUBECONFIG, PROMETHEUS_URL, KWOK_NODE or NODE_NAME, ...
  kubectl get nodes
  hack/local-down.sh $STATE  # stops it

EOF
}

main "$@"
