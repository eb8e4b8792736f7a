//go:build tools

// Package tools pins metrics-server, the real node's reference for
// metrics.k8s.io (podpilot's resourceRules are compared with it). Build it
// with `hack/build-tools.sh node`.
package tools

import (
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
