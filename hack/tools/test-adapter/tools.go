//go:build tools

// Package tools pins the custom-metrics-apiserver's test adapter, the real external-metrics
// adapter the e2e test of --external-metrics-forward runs beside podpilot (in KEDA's place: KEDA
// is not built here). Build it with `hack/build-tools.sh test-adapter`.
package tools

import (
	_ "sigs.k8s.io/custom-metrics-apiserver/test-adapter"
)
