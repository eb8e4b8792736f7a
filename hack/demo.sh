#!/usr/bin/env bash
# The podpilot demo on a local control plane: hack/demo (Go) brings up the
# cluster in _output/demo-cluster, installs podpilot, runs the seed's
# PodAutoscaler example under a load profile, prints a table row every 5 s
# and writes _output/demo/podpilot-demo.svg. See the doc comment of
# hack/demo/main.go for the exit codes.
#
# The node: a real kubelet node where this machine can run containers
# (hack/node-preflight.sh decides, and installs what the node needs as `make
# node-tools` does): podpilot is installed by its Helm chart as two pods, the
# workload is test/workload and the load goes to its Service. Elsewhere it
# says why and runs the kwok demo: bin/podpilot on the host, pods that run
# nothing, and a host exporter playing the workload.
#
# Usage: hack/demo.sh [--keep] [--state-dir DIR] [--svg FILE]
#   --keep (or KEEP=1) leaves the cluster, podpilot and the load running.
# Environment:
#   DEMO_NODE  auto (default): the real node if the preflight passes, else
#              kwok; real: fail if it does not; kwok: the kwok demo
#   IMAGE_TAG  tag of the images built for the real node (make passes its version)
set -euo pipefail
export PATH=$PATH:/usr/local/go/bin
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$PODPILOT_ROOT"
export GOFLAGS=${GOFLAGS:--buildvcs=false}
DEMO_NODE=${DEMO_NODE:-auto}
IMAGE_TAG=${IMAGE_TAG:-dev}
mkdir -p _output/demo

# choose_node prints the node the demo runs on; on the way it says why the
# real node cannot run, if it cannot.
choose_node() {
  case $DEMO_NODE in
    kwok) echo kwok; return ;;
    auto | real) ;;
    *) die "DEMO_NODE=$DEMO_NODE: want auto, real or kwok" ;;
  esac
  local why rc=0
  why=$(hack/node-preflight.sh --install --log _output/demo/node-tools.log) || rc=$?
  case $rc in
    0) echo real; return ;;
    1) ;;
    *) die "this machine can run the real node, but installing its tools failed: $why
Fix that and run 'make demo' again, or choose the kwok node on purpose with DEMO_NODE=kwok." ;;
  esac
  [[ $DEMO_NODE == auto ]] || die "DEMO_NODE=real, but this machine cannot run the real node: $why"
  cat >&2 <<EOF

The real node cannot run on this machine: $why.
Falling back to the kwok demo: bin/podpilot runs on the host, the pods run nothing
(kwok), and a host exporter plays the workload's counter, cpu and memory.
(docs/local-cluster.md says what the real node needs.)

EOF
  echo kwok
}

node=$(choose_node)
if [[ $node == real ]]; then
  # The node imports podpilot's image and the workload's; the pause image
  # is containerd's sandbox image. bin/podpilot is `make build`'s.
  log "building the images (hack/build-image.sh podpilot pause workload, tag $IMAGE_TAG)"
  IMAGE_TAG=$IMAGE_TAG hack/build-image.sh podpilot pause workload >_output/demo/images.log 2>&1 ||
    { tail -n 20 _output/demo/images.log >&2; die "building the images failed (log _output/demo/images.log)"; }
fi
# Built and exec'd rather than `go run`, which turns every failure into exit
# status 1; the demo's exit codes say what failed.
go build -o _output/bin/demo ./hack/demo
exec _output/bin/demo --node="$node" --image-tag="$IMAGE_TAG" "$@"
