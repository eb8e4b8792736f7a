#!/usr/bin/env bash
# Runs golangci-lint (.golangci.yml) and logcheck over the main module, with
# the pinned binaries from the tools cache (hack/build-tools.sh lint).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$PODPILOT_ROOT"

"$PODPILOT_ROOT/hack/build-tools.sh" lint
"$GOLANGCI_LINT" run --build-tags faults ./...
# logcheck: structured calls everywhere; contextual logging (klog.FromContext,
# no global klog.Info*) everywhere but the programs under hack/ and test/.
"$LOGCHECK" -check-structured -check-contextual -check-with-helpers=false \
  $(go list ./... | grep -vE '/(hack|test)/')
log "lint passed"
