//go:build tools

// Package prometheusadaptercurrent records prometheus-adapter's command so that go.mod pins it, here
// together with podpilot's own Kubernetes library versions (see port.go.in).
package prometheusadaptercurrent

import _ "sigs.k8s.io/prometheus-adapter/cmd/adapter"
