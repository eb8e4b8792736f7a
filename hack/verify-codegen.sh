#!/usr/bin/env bash
# Fails if the generated code or CRD manifests are stale: regenerates them
# into a scratch copy of the repository and compares it with the working
# tree, so it needs no git history and catches added, changed and deleted
# files alike. Then runs the offline CRD admission tests in hack/tools/codegen.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GENERATED=(
  pkg/apis/autoscaling/v1alpha1/zz_generated.deepcopy.go
  pkg/generated
  manifests/crd
  charts/podpilot/files/crds
)

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# Copy the module without VCS data and build output; the generators load
# packages from the copy.
tar -C "$ROOT" --exclude=./.git --exclude=./_output -cf - . | tar -C "$SCRATCH" -xf -
"$ROOT/hack/update-codegen.sh" "$SCRATCH"

status=0
for path in "${GENERATED[@]}"; do
  if ! diff -ruN "$ROOT/$path" "$SCRATCH/$path"; then
    status=1
  fi
done
if [[ $status -ne 0 ]]; then
  echo "generated files are out of date: run hack/update-codegen.sh" >&2
  exit 1
fi
echo "generated files are up to date" >&2

(cd "$ROOT/hack/tools/codegen" && GOWORK=off go test ./...)
