#!/usr/bin/env bash
# Fails if `go mod tidy` would change go.mod or go.sum of the main module or
# the tools modules.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rc=0
for dir in "$PODPILOT_ROOT" "$PODPILOT_ROOT"/hack/tools "$PODPILOT_ROOT"/hack/tools/*/; do
  [[ -f $dir/go.mod ]] || continue
  (cd "$dir" && go mod tidy -diff >/dev/null) || { log "go mod tidy needed in $dir"; rc=1; }
done
exit $rc
