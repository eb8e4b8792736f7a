package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// metricsServerVersion is what hack/tools pins (METRICS_SERVER_VERSION).
const metricsServerVersion = "v0.8.0"

// apisNamespace holds the Services the metrics-server and prometheus-adapter
// APIServices point at (not podpilot's namespace: its Service is podpilot's).
const apisNamespace = "bench-apis"

// registerHostAPI points the APIServices names at the process on port
// (framework.RegisterHostAPIs, through Service service in apisNamespace) and
// waits until each is Available.
func (e *env) registerHostAPI(ctx context.Context, service string, port int, names ...string) error {
	return e.c.RegisterHostAPIs(ctx, apisNamespace, service, port, names...)
}

// startMetricsServer runs metrics-server at its default resolution (15s)
// and registers it as v1beta1.metrics.k8s.io, as a cluster with
// metrics-server has it.
func (e *env) startMetricsServer(ctx context.Context) (stop func(), err error) {
	ms, err := e.c.StartMetricsServer(ctx, 15*time.Second)
	if err != nil {
		return func() {}, err
	}
	if err := e.registerHostAPI(ctx, "metrics-server", ms.Port, "v1beta1.metrics.k8s.io"); err != nil {
		ms.Stop()
		return func() {}, err
	}
	return ms.Stop, nil
}

// startPrometheusAdapter runs prometheus-adapter on podpilot's default rule
// file (prometheus-adapter's format) with its Helm chart's relist interval
// (1m; the binary's own default is 10m) and registers it as
// custom.metrics.k8s.io.
func (e *env) startPrometheusAdapter(ctx context.Context) (stop func(), err error) {
	if e.adapterUp {
		return func() {}, nil
	}
	if e.o.adapter == "" {
		return func() {}, fmt.Errorf("no prometheus-adapter binary: pass --prometheus-adapter (make bench-node builds it)")
	}
	dir := filepath.Join(e.c.StateDir, "prometheus-adapter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return func() {}, fmt.Errorf("prometheus-adapter dir: %w", err)
	}
	cfg, err := rulesFile(dir, rules.DefaultYAML)
	if err != nil {
		return func() {}, err
	}
	a, err := e.c.RunPodpilot(e.o.adapter, "--config="+cfg, "--metrics-relist-interval=1m", "--cert-dir="+dir, "-v=1")
	if err != nil {
		return func() {}, fmt.Errorf("start prometheus-adapter: %w", err)
	}
	if err := a.WaitReady(ctx, 2*time.Minute); err != nil {
		a.Stop()
		return func() {}, fmt.Errorf("prometheus-adapter: %w", err)
	}
	if err := e.registerHostAPI(ctx, "prometheus-adapter", a.Port, "v1beta2.custom.metrics.k8s.io", "v1beta1.custom.metrics.k8s.io"); err != nil {
		a.Stop()
		return func() {}, err
	}
	e.adapterUp = true
	return a.Stop, nil
}
