package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/bench/internal/procstat"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// adapterClientQPS lifts prometheus-adapter's client throttle (see adapterArgs).
const adapterClientQPS = "1000"

// adapterArgs run prometheus-adapter on the bench's rule file (podpilot's
// default rules, in prometheus-adapter's format) with podpilot's discovery
// interval; the framework adds the port, kubeconfigs and Prometheus URL.
func (e *Env) adapterArgs(certDir string) []string {
	return []string{"--config=" + e.rulesFile, "--metrics-relist-interval=" + e.Cfg.RelistInterval.String(),
		"--cert-dir=" + certDir, "-v=1",
		// prometheus-adapter LISTs the selected objects from the kube-apiserver
		// on every request; at its default client throttle (5 QPS, burst 10)
		// it serves about 4 req/s, so the bench lifts it to measure its design,
		// not its default.
		"--client-qps=" + adapterClientQPS, "--client-burst=" + adapterClientQPS}
}

// startAdapter runs the prometheus-adapter binary against the cluster.
func (e *Env) startAdapter(ctx context.Context) (*framework.Podpilot, error) {
	return e.startAdapterBinary(ctx, e.Cfg.Adapter, "adapter-certs")
}

// startAdapterBinary runs a prometheus-adapter binary against the cluster
// with its serving certificate in certs under the state directory.
func (e *Env) startAdapterBinary(ctx context.Context, binary, certs string) (*framework.Podpilot, error) {
	dir := filepath.Join(e.Cluster.StateDir, certs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("adapter cert dir: %w", err)
	}
	return e.startMetricsServer(ctx, binary, e.adapterArgs(dir))
}

// adapterTargets starts prometheus-adapter, adds it direct and through the
// aggregator (v1beta2.custom.metrics.k8s.io pointed at it for the bench),
// and returns a cleanup that restores podpilot's APIServices.
func (e *Env) adapterTargets(ctx context.Context, targets []apiTarget, agg *http.Client) ([]apiTarget, func(), error) {
	a, err := e.startAdapter(ctx)
	if err != nil {
		return targets, func() {}, fmt.Errorf("prometheus-adapter: %w", err)
	}
	cleanup := func() {
		if err := e.routeCustomAPIs(context.WithoutCancel(ctx), e.Podpilot.Port); err != nil {
			e.logf("restore podpilot's APIServices: %v", err)
		}
		a.Stop()
	}
	hc, err := restHTTPClient(e.Cluster.DirectConfig(a))
	if err != nil {
		return targets, cleanup, err
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", a.Port)
	if err := e.waitServed(ctx, hc, base, e.Cfg.APIPods); err != nil {
		return targets, cleanup, fmt.Errorf("prometheus-adapter: %w", err)
	}
	targets = append(targets,
		apiTarget{name: "prometheus-adapter direct", client: hc, req: getRequest(base, customPath(apiNamespace)), server: a},
		apiTarget{name: "prometheus-adapter via aggregator", client: agg, req: getRequest(e.Cluster.Config.Host, customPath(apiNamespace)), server: a,
			setup: func(ctx context.Context) error { return e.routeCustomAPIs(ctx, a.Port) }},
	)
	return targets, cleanup, nil
}

func restHTTPClient(cfg *rest.Config) (*http.Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build HTTP client for %s: %w", cfg.Host, err)
	}
	return hc, nil
}

func cpuOf(pid int) (d time.Duration) {
	if pid == 0 {
		return 0
	}
	d, _ = procstat.CPU(pid)
	return d
}

// countItems returns the length of a MetricValueList's items.
func countItems(body []byte) (int, error) {
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return 0, fmt.Errorf("decode metric value list: %w", err)
	}
	return len(l.Items), nil
}
