//go:build tools

// Package tools pins the custom-metrics-apiserver's test adapter, the real external-metrics
// adapter the e2e test of --external-metrics-forward in `make test` runs beside podpilot (it builds
// in seconds; KEDA itself, about 10 minutes cold, is hack/tools/keda's, for `make test-keda`).
// Build it with `hack/build-tools.sh test-adapter`.
package tools

import (
	_ "sigs.k8s.io/custom-metrics-apiserver/test-adapter"
)
