//go:build tools

// Package tools pins Thanos (sidecar and querier are one binary), one of the
// distributed-store backends the backend test tier runs podpilot against.
// Build it with `hack/build-tools.sh backends`.
package tools

import (
	_ "github.com/thanos-io/thanos/cmd/thanos"
)
