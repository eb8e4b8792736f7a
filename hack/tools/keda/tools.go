//go:build tools

// Package tools pins KEDA's operator and metrics server (cmd/operator, cmd/adapter), the other
// external-metrics adapter the e2e test of --external-metrics-forward runs beside podpilot
// (test/e2e/keda_test.go, `make test-keda`). Build them with `hack/build-tools.sh keda`.
package tools

import (
	_ "github.com/kedacore/keda/v2/cmd/adapter"
	_ "github.com/kedacore/keda/v2/cmd/operator"
)
