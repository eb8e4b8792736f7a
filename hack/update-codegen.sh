#!/usr/bin/env bash
# Regenerates everything derived from pkg/apis: deepcopy functions, the
# versioned clientset, listers and informers under pkg/generated, and the
# CRD manifests under manifests/crd. The generators are built from the
# module hack/tools/codegen into _output/bin.
#
# Usage: hack/update-codegen.sh [OUTPUT_ROOT]
# OUTPUT_ROOT (default: the repository root) is where the generated tree is
# written; hack/verify-codegen.sh passes a scratch copy of the repository.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(cd "${1:-$ROOT}" && pwd)
BIN=$ROOT/_output/bin
MODULE=github.com/podpilot/podpilot
APIS=$MODULE/pkg/apis
GEN=$MODULE/pkg/generated
HEADER=$ROOT/hack/boilerplate.go.txt
export GOWORK=off GOFLAGS=-buildvcs=false

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

log "building code generators into $BIN"
mkdir -p "$BIN"
(cd "$ROOT/hack/tools/codegen" && go build -o "$BIN/" \
  k8s.io/code-generator/cmd/client-gen \
  k8s.io/code-generator/cmd/lister-gen \
  k8s.io/code-generator/cmd/informer-gen \
  sigs.k8s.io/controller-tools/cmd/controller-gen)

cd "$OUT"

log "deepcopy and CRD manifests (controller-gen)"
rm -f pkg/apis/autoscaling/v1alpha1/zz_generated.deepcopy.go
rm -f manifests/crd/*_*.yaml
"$BIN/controller-gen" \
  object:headerFile="$HEADER" \
  crd:crdVersions=v1 \
  output:crd:artifacts:config=manifests/crd \
  paths=./pkg/apis/...
# The Helm chart renders the same CRD (charts/podpilot/templates/crd.yaml).
rm -f charts/podpilot/files/crds/*_*.yaml
cp manifests/crd/*_*.yaml charts/podpilot/files/crds/

log "clientset, listers and informers (code-generator)"
rm -rf pkg/generated
"$BIN/client-gen" \
  --go-header-file "$HEADER" \
  --clientset-name versioned \
  --input-base "$APIS" \
  --input autoscaling/v1alpha1 \
  --output-dir pkg/generated/clientset \
  --output-pkg "$GEN/clientset"
"$BIN/lister-gen" \
  --go-header-file "$HEADER" \
  --output-dir pkg/generated/listers \
  --output-pkg "$GEN/listers" \
  "$APIS/autoscaling/v1alpha1"
"$BIN/informer-gen" \
  --go-header-file "$HEADER" \
  --versioned-clientset-package "$GEN/clientset/versioned" \
  --listers-package "$GEN/listers" \
  --output-dir pkg/generated/informers \
  --output-pkg "$GEN/informers" \
  "$APIS/autoscaling/v1alpha1"

log "done"
