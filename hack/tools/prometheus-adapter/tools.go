//go:build tools

// Package prometheusadapter records the prometheus-adapter command so that go.mod pins it.
package prometheusadapter

import _ "sigs.k8s.io/prometheus-adapter/cmd/adapter"
