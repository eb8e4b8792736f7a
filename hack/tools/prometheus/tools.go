//go:build tools

// Package tools pins Prometheus with its Kubernetes service discovery for
// the real node. Build it with `hack/build-tools.sh node`.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
)
