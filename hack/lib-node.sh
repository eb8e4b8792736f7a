#!/usr/bin/env bash
# The real node (PODPILOT_NODE=real) for hack/local-up.sh and
# hack/local-down.sh: containerd (Debian's, with its own root, state and
# socket under the state directory), a kubelet, kube-proxy in iptables mode
# and kube-scheduler, on a bridge the cluster creates. Source it after lib.sh
# with STATE set; docs/local-cluster.md explains every setting.
#
# Nothing leaves the machine: before anything starts, guard rules count and
# drop every packet to the service or pod range, or from the pod range, that
# would go out any interface but loopback and the cluster's bridge, and the
# service range is routed onto the bridge. `node_guard_packets` prints how
# many packets the guards dropped (the tests require 0).
#
# Only one real node runs on a machine at a time: kube-proxy's and the
# kubelet's iptables chains have fixed names. /run/podpilot-node records the
# state directory that owns it.

NODE_LOCK=/run/podpilot-node
POD_CIDR=${PODPILOT_POD_CIDR:-10.244.0.0/24}
SERVICE_CIDR=10.0.0.0/24
NODE_NAME=podpilot-node-0
CNI_BIN_DIR=/usr/lib/cni
# The sysctls the node may change: the bridge plugin sets ip_forward (a
# gateway bridge needs it); the kubelet sets the panic and overcommit
# tunables it expects. local-down.sh restores what local-up.sh found.
NODE_SYSCTLS="net.ipv4.ip_forward vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

# node_names sets the names derived from the state directory: the bridge,
# the guard chain and the cgroup root, so that what one cluster made is
# never mistaken for another's.
node_names() {
  NODE_ID=$(printf %s "$STATE" | sha256sum | cut -c1-8)
  BRIDGE=pp-$NODE_ID
  GUARD_CHAIN=PODPILOT-GUARD-$NODE_ID
  CGROUP_ROOT=/podpilot-$NODE_ID
  local prefix=${POD_CIDR%/*}
  NODE_IP=${prefix%.*}.$((${prefix##*.} + 1))
  CONTAINERD_SOCK=$STATE/containerd/containerd.sock
}

# node_take_lock records this state directory as the machine's real node,
# failing if another cluster's node still runs.
node_take_lock() {
  if [[ -f $NODE_LOCK ]]; then
    local owner; owner=$(cat "$NODE_LOCK")
    if [[ $owner != "$STATE" && -f $owner/pids/containerd.pid ]] && kill -0 "$(cat "$owner/pids/containerd.pid")" 2>/dev/null; then
      die "a real node from $owner is running: one per machine (kube-proxy's chains are host-wide); stop it with hack/local-down.sh $owner"
    fi
  fi
  echo "$STATE" >"$NODE_LOCK"
}

node_check() {
  [[ $(id -u) == 0 ]] || die "the real node needs root (network namespaces, cgroups, iptables)"
  for b in containerd containerd-shim-runc-v2 runc ctr iptables iptables-save; do
    command -v "$b" >/dev/null || die "$b not found: run 'make node-tools' (installs Debian's containerd, runc, CNI plugins, iptables)"
  done
  for b in bridge host-local loopback; do
    [[ -x $CNI_BIN_DIR/$b ]] || die "$CNI_BIN_DIR/$b not found: run 'make node-tools'"
  done
  for b in "$KUBELET" "$KUBE_PROXY" "$KUBE_SCHEDULER" "$PROMETHEUS_NODE"; do
    [[ -x $b ]] || die "$b is missing: run 'make node-tools'"
  done
  [[ -d /sys/fs/cgroup/cpu && -d /sys/fs/cgroup/memory ]] || die "the real node expects cgroup v1 hierarchies under /sys/fs/cgroup (see docs/local-cluster.md)"
}

# node_guards_up records the sysctls, creates the bridge with the node's
# address, routes the service range onto it, and installs the guard chain.
node_guards_up() {
  mkdir -p "$STATE/node"
  local s
  for s in $NODE_SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done >"$STATE/node/sysctl.orig"
  ip link add "$BRIDGE" type bridge
  ip addr add "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route add "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
  iptables -w -t mangle -N "$GUARD_CHAIN"
  iptables -w -t mangle -A "$GUARD_CHAIN" -o lo -j RETURN
  iptables -w -t mangle -A "$GUARD_CHAIN" -o "$BRIDGE" -j RETURN
  iptables -w -t mangle -A "$GUARD_CHAIN" -d "$SERVICE_CIDR" -m comment --comment "podpilot guard: service range" -j DROP
  iptables -w -t mangle -A "$GUARD_CHAIN" -d "$POD_CIDR" -m comment --comment "podpilot guard: to pods" -j DROP
  iptables -w -t mangle -A "$GUARD_CHAIN" -s "$POD_CIDR" -m comment --comment "podpilot guard: from pods" -j DROP
  iptables -w -t mangle -I POSTROUTING 1 -j "$GUARD_CHAIN"
  log "guards up: $GUARD_CHAIN (mangle POSTROUTING), bridge $BRIDGE $NODE_IP, $SERVICE_CIDR routed onto it"
}

# node_guard_packets prints how many packets the guards dropped.
node_guard_packets() {
  iptables -w -t mangle -L "$GUARD_CHAIN" -v -x -n 2>/dev/null | awk '$3 == "DROP" { n += $1 } END { print n + 0 }'
}

containerd_config() {
  local c=$STATE/containerd
  mkdir -p "$c" "$STATE/cni/net.d"
  cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
plugin_dir = ""
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
oom_score = 0
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$c/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/podpilot/pause:local"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$c/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF
  # The bridge plugin on the cluster's bridge, addresses from the pod range
  # (leases kept under the state directory), no masquerading: pods talk to
  # the node and each other only.
  cat >"$STATE/cni/net.d/10-podpilot.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "podpilot-$NODE_ID",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "isDefaultGateway": true,
      "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
               "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]]}
    }
  ]
}
EOF
}

start_containerd() {
  containerd_config
  start containerd containerd --config "$STATE/containerd/config.toml" --log-level warn
  wait_for containerd ctr -a "$CONTAINERD_SOCK" version
  # The sandbox image, built offline like podpilot's own (hack/build-image.sh).
  local pause=$PODPILOT_ROOT/_output/images/pause.tar
  [[ -f $pause ]] || "$PODPILOT_ROOT/hack/build-image.sh" pause
  ctr -a "$CONTAINERD_SOCK" -n k8s.io images import "$pause" >/dev/null
  log "imported the pause image into containerd"
}

kubelet_config() {
  mkdir -p "$STATE/kubelet" "$STATE/pod-logs" "$STATE/kubelet-plugins"
  # Pods resolve nothing: their resolv.conf names their own loopback, so no
  # query can leave the machine.
  printf 'nameserver 127.0.0.1\noptions ndots:1\n' >"$STATE/node/resolv.conf"
  cat >"$STATE/node/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1: the kubelet refuses it since 1.35 unless told otherwise.
failCgroupV1: false
# containerd 1.6 has no RuntimeConfig call: the kubelet uses this driver.
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
# No CAP_SYS_RESOURCE on this machine kind: a negative oom_score_adj fails.
oomScoreAdj: 0
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
resolvConf: $STATE/node/resolv.conf
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet-plugins
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 110
EOF
}

# node_cgroups creates the kubelet's cgroup root in every v1 hierarchy (the
# kubelet requires it to exist), with the root's cpus and memory nodes.
node_cgroups() {
  local c
  for c in /sys/fs/cgroup/*; do
    mountpoint -q "$c" || continue
    mkdir -p "$c$CGROUP_ROOT"
    if [[ -f $c/cpuset.cpus ]]; then
      cat "$c/cpuset.cpus" >"$c$CGROUP_ROOT/cpuset.cpus"
      cat "$c/cpuset.mems" >"$c$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

start_kubelet() {
  node_cgroups
  kubelet_config
  start kubelet "$KUBELET" --config "$STATE/node/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" \
    --containerd "$CONTAINERD_SOCK" --v 1
  wait_for kubelet node_is_ready
  # No node-lifecycle controller runs (see local-up.sh), so nothing lifts
  # the not-ready taint the kubelet registers with: lift it once Ready.
  kubectl --kubeconfig "$STATE/admin.kubeconfig" taint node "$NODE_NAME" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

node_is_ready() {
  kapi "$APISERVER_URL/api/v1/nodes/$NODE_NAME" | grep -q '"reason": "KubeletReady"'
}

start_kube_proxy() {
  cat >"$STATE/node/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
oomScoreAdj: 0
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
nodePortAddresses: [$NODE_IP/32]
# Leave the host's conntrack sysctls and route_localnet as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false, masqueradeAll: false, minSyncPeriod: 0s}
EOF
  start kube-proxy "$KUBE_PROXY" --config "$STATE/node/kube-proxy.yaml" --v 1
  wait_for kube-proxy curl -sf "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz"
}

start_scheduler() {
  local kc=$STATE/scheduler.kubeconfig
  start kube-scheduler "$KUBE_SCHEDULER" --kubeconfig "$kc" --authentication-kubeconfig "$kc" \
    --authorization-kubeconfig "$kc" --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
    --leader-elect=false --profiling=false
  wait_for kube-scheduler curl -sfk "https://127.0.0.1:$SCHEDULER_PORT/healthz"
}

# node_pki adds the node's certificates to local-up.sh's PKI.
node_pki() {
  cert kubelet "system:node:$NODE_NAME" system:nodes ca "DNS:$NODE_NAME,IP:$NODE_IP"
  cert kube-proxy system:kube-proxy "" ca
  cert scheduler system:kube-scheduler "" ca
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ca
  cert prometheus podpilot-local-prometheus "" ca
}

# node_rbac lets Prometheus discover pods and nodes and read the kubelet's
# cAdvisor endpoint, with its own identity as in a real cluster.
node_rbac() {
  kubectl --kubeconfig "$STATE/admin.kubeconfig" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: podpilot-local:prometheus}
rules:
- apiGroups: [""]
  resources: [nodes, nodes/metrics, pods, services, endpoints]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- nonResourceURLs: [/metrics, /metrics/cadvisor, /metrics/resource]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: podpilot-local:prometheus}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: podpilot-local:prometheus}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: podpilot-local-prometheus}
EOF
}

# prometheus_service makes Prometheus reachable from pods as in a cluster:
# the Service monitoring/prometheus, without a selector, whose endpoint is
# Prometheus on the node's address. Prints the Service's URL.
prometheus_service() {
  local kc=$STATE/admin.kubeconfig
  kubectl --kubeconfig "$kc" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: monitoring}
---
apiVersion: v1
kind: Service
metadata: {name: prometheus, namespace: monitoring}
spec:
  ports: [{name: web, port: 9090, targetPort: $PROMETHEUS_PORT, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: prometheus-node
  namespace: monitoring
  labels: {kubernetes.io/service-name: prometheus, endpointslice.kubernetes.io/managed-by: podpilot-local}
addressType: IPv4
ports: [{name: web, port: $PROMETHEUS_PORT, protocol: TCP}]
endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
EOF
  echo "http://$(kubectl --kubeconfig "$kc" -n monitoring get service prometheus -o jsonpath='{.spec.clusterIP}'):9090"
}

# prometheus_node_jobs prints the scrape jobs that find targets through the
# kube-apiserver: annotated pods, and the kubelet's cAdvisor endpoint.
prometheus_node_jobs() {
  local p=$STATE/pki
  local sd="api_server: $APISERVER_URL
    tls_config: {ca_file: $p/ca.crt, cert_file: $p/prometheus.crt, key_file: $p/prometheus.key}"
  cat <<EOF
- job_name: kubernetes-pods
  kubernetes_sd_configs:
  - role: pod
    $sd
  relabel_configs:
  - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape], action: keep, regex: "true"}
  - {source_labels: [__meta_kubernetes_pod_phase], action: drop, regex: (Succeeded|Failed)}
  - source_labels: [__address__, __meta_kubernetes_pod_annotation_prometheus_io_port]
    action: replace
    regex: ([^:]+)(?::\d+)?;(\d+)
    replacement: \$1:\$2
    target_label: __address__
  - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path], action: replace, regex: (.+), target_label: __metrics_path__}
  - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
  - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
# Every 5s: the endpoint is large, and the kubelet computes it per scrape.
- job_name: kubernetes-cadvisor
  scrape_interval: 5s
  scheme: https
  metrics_path: /metrics/cadvisor
  tls_config: {ca_file: $p/ca.crt, cert_file: $p/prometheus.crt, key_file: $p/prometheus.key}
  kubernetes_sd_configs:
  - role: node
    $sd
  relabel_configs:
  - {source_labels: [__meta_kubernetes_node_name], target_label: node}
EOF
}

# node_start starts the node after the control plane: containerd, the
# kubelet, kube-proxy and the scheduler.
node_start() {
  start_containerd
  start_kubelet
  start_kube_proxy
  start_scheduler
  node_rbac
  PROMETHEUS_CLUSTER_URL=$(prometheus_service)
  wait_for kube-apiserver kapi "$APISERVER_URL/api/v1/namespaces/default/serviceaccounts/default"
}

# node_drain deletes every pod through the API while the kubelet still runs,
# so that it stops their sandboxes and releases their network namespaces and
# addresses. Controllers and the scheduler are stopped first (by the
# caller), so nothing replaces them.
node_drain() {
  local k=(kubectl --kubeconfig "$STATE/admin.kubeconfig" --request-timeout 5s)
  [[ -f $STATE/pids/kubelet.pid ]] || return 0
  "${k[@]}" get --raw /readyz >/dev/null 2>&1 || return 0
  "${k[@]}" delete pods --all --all-namespaces --grace-period=2 --wait=false >/dev/null 2>&1 || true
  for _ in $(seq 1 120); do
    [[ -z $("${k[@]}" get pods -A -o name 2>/dev/null) ]] && return 0
    sleep 0.5
  done
  log "pods still present after 60s; removing their containers directly"
}

# node_stop_containers kills and removes every container and task in
# containerd's k8s.io namespace, then the shims still serving this
# containerd's socket.
node_stop_containers() {
  local ctr=(ctr -a "$CONTAINERD_SOCK" -n k8s.io) id pid
  if [[ -S $CONTAINERD_SOCK ]]; then
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
      "${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 0.5
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true; done
    for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true; done
  fi
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $CONTAINERD_SOCK" || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
}

# node_cleanup_host removes what the node left on the host: mounts under the
# state directory, pod network namespaces with an address in the pod range,
# the bridge and its route, kube-proxy's and the kubelet's iptables chains,
# the cgroups under the node's cgroup root; then the guards, and the sysctls
# as they were before.
node_cleanup_host() {
  local m ns c t chain
  findmnt -rn -o TARGET | awk -v s="$STATE/" 'index($0, s) == 1' | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
  done
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ { print $1 }'); do
    if ip -n "$ns" -4 -o addr show 2>/dev/null | awk '{ print $4 }' | grep -q "^${POD_CIDR%.*}\."; then
      ip netns delete "$ns" 2>/dev/null || true
    fi
  done
  if [[ -x $KUBE_PROXY ]]; then "$KUBE_PROXY" --cleanup >/dev/null 2>&1 || true; fi
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle; do
      "$ipt" -w -t "$t" -S 2>/dev/null | awk '$1 == "-A" && / -j KUBE-/' | while read -r rule; do
        # shellcheck disable=SC2086 # the rule's words are the arguments
        "$ipt" -w -t "$t" ${rule/-A/-D} 2>/dev/null || true
      done
      for chain in $("$ipt" -w -t "$t" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        "$ipt" -w -t "$t" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$ipt" -w -t "$t" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        "$ipt" -w -t "$t" -X "$chain" 2>/dev/null || true
      done
    done
  done
  # The kubelet links every container log into /var/log/containers; libcni
  # caches results under /var/lib/cni/results by network name.
  find /var/log/containers -maxdepth 1 -lname "$STATE/*" -delete 2>/dev/null || true
  rm -f /var/lib/cni/results/"podpilot-$NODE_ID"-* 2>/dev/null || true
  # The shims' sockets live in /run/containerd/s whatever the state dir; the
  # directories go if nothing else uses them.
  rmdir /run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni /var/log/containers 2>/dev/null || true
  ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  for c in /sys/fs/cgroup/*; do
    [[ -d $c$CGROUP_ROOT ]] && find "$c$CGROUP_ROOT" -depth -type d -exec rmdir {} + 2>/dev/null
    [[ -d $c$CGROUP_ROOT ]] && log "cgroup $c$CGROUP_ROOT still holds processes"
  done
  iptables -w -t mangle -D POSTROUTING -j "$GUARD_CHAIN" 2>/dev/null || true
  iptables -w -t mangle -F "$GUARD_CHAIN" 2>/dev/null || true
  iptables -w -t mangle -X "$GUARD_CHAIN" 2>/dev/null || true
  if [[ -f $STATE/node/sysctl.orig ]]; then
    while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null || log "could not restore $kv"; done <"$STATE/node/sysctl.orig"
  fi
  if [[ -f $NODE_LOCK && $(cat "$NODE_LOCK") == "$STATE" ]]; then rm -f "$NODE_LOCK"; fi
}
