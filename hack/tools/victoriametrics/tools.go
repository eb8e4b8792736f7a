//go:build tools

// Package tools pins VictoriaMetrics' single-node server, one of the
// distributed-store backends the backend test tier runs podpilot against.
// Build it with `hack/build-tools.sh backends`.
package tools

import (
	_ "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
)
