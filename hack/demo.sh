#!/usr/bin/env bash
# The podpilot demo on a local control plane: hack/demo (Go) brings up the
# cluster in _output/demo-cluster, runs bin/podpilot (built by `make build`)
# and the seed's PodAutoscaler example under a load profile, prints a table
# row every 5 s and writes _output/demo/podpilot-demo.svg. See the doc
# comment of hack/demo/main.go for the exit codes.
#
# Usage: hack/demo.sh [--keep] [--state-dir DIR] [--svg FILE]
#   --keep (or KEEP=1) leaves the cluster, podpilot and the load running.
set -euo pipefail
export PATH=$PATH:/usr/local/go/bin
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$PODPILOT_ROOT"
export GOFLAGS=${GOFLAGS:--buildvcs=false}
# Built and exec'd rather than `go run`, which turns every failure into exit
# status 1; the demo's exit codes say what failed.
go build -o _output/bin/demo ./hack/demo
exec _output/bin/demo "$@"
