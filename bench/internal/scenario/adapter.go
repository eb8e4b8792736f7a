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

// adapterClientQPS lifts prometheus-adapter's client throttle: it LISTs the
// selected objects from the kube-apiserver on every request, and at its
// default (5 QPS, burst 10) serves about 4 req/s. Scenario a measures it both
// ways, each labelled: its design, and what a user running it at its default gets.
const adapterClientQPS = "1000"

// adapterArgs run prometheus-adapter on the bench's rule file (podpilot's
// default rules, in prometheus-adapter's format) with podpilot's discovery
// interval; the framework adds the port, kubeconfigs and Prometheus URL.
// qps, when set, lifts its client throttle (see adapterClientQPS).
func (e *Env) adapterArgs(certDir, qps string) []string {
	args := []string{"--config=" + e.rulesFile, "--metrics-relist-interval=" + e.Cfg.RelistInterval.String(),
		"--cert-dir=" + certDir, "-v=1"}
	if qps != "" {
		args = append(args, "--client-qps="+qps, "--client-burst="+qps)
	}
	return args
}

// startAdapter runs the prometheus-adapter binary against the cluster, its
// client throttle lifted.
func (e *Env) startAdapter(ctx context.Context) (*framework.Podpilot, error) {
	return e.startAdapterBinary(ctx, e.Cfg.Adapter, "adapter-certs", adapterClientQPS)
}

// startAdapterBinary runs a prometheus-adapter binary against the cluster
// with its serving certificate in certs under the state directory and its
// client throttle lifted to qps (empty: its default).
func (e *Env) startAdapterBinary(ctx context.Context, binary, certs, qps string) (*framework.Podpilot, error) {
	dir := filepath.Join(e.Cluster.StateDir, certs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("adapter cert dir: %w", err)
	}
	return e.startMetricsServer(ctx, binary, e.adapterArgs(dir, qps))
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
