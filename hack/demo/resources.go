package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Per-pod resource usage the demo exports (as cAdvisor series) when podpilot
// serves metrics.k8s.io. cpu follows the qps a pod gets, well under the
// example's 50% of the 100m request even at the peak (2400 qps → 24%), and
// memory stays at 64Mi of 256Mi, so that zdns_vanguard_qps decides.
const (
	cpuBaseCores     = 0.005
	cpuCoresPer1kQPS = 0.008
	podMemoryBytes   = 64 << 20
)

// cpuCores is the cpu a pod uses at perPod qps.
func cpuCores(perPod float64) float64 {
	return cpuBaseCores + cpuCoresPer1kQPS*perPod/1000
}

// writeRules writes the default rules plus the framework's cAdvisor
// resourceRules into the state directory and returns the file's path: with
// them podpilot serves metrics.k8s.io (cpu and memory) from Prometheus too.
func (d *demo) writeRules() (string, error) {
	path := filepath.Join(d.opts.stateDir, "podpilot-rules.yaml")
	if err := os.WriteFile(path, []byte(rules.DefaultYAML+framework.ResourceRulesYAML), 0o644); err != nil {
		return "", fmt.Errorf("write rule file %s: %w", path, err)
	}
	return path, nil
}

// registerAPIs asks the running podpilot whether it serves
// metrics.k8s.io/v1beta1 and registers the APIServices it serves. Without
// metrics.k8s.io the example's cpu and memory targets are left out, with one
// line saying why: a metric the autoscaler cannot read blocks scale-down.
func (d *demo) registerAPIs(ctx context.Context) error {
	code, err := d.probeResourceAPI(ctx)
	if err == nil && code == http.StatusOK {
		if err := d.cluster.RegisterMetricsAPIs(ctx, d.pp.Port); err != nil {
			return fmt.Errorf("register podpilot's APIServices: %w", err)
		}
		d.resources = true
		d.step("APIServices %s are Available", strings.Join(framework.MetricsAPIServices, ", "))
		return nil
	}
	why := fmt.Sprintf("GET /apis/metrics.k8s.io/v1beta1 answers %d", code)
	if err != nil {
		why = err.Error()
	}
	custom := without(framework.MetricsAPIServices, "v1beta1.metrics.k8s.io")
	if err := d.cluster.RegisterSomeMetricsAPIs(ctx, d.pp.Port, custom...); err != nil {
		return fmt.Errorf("register podpilot's APIServices: %w", err)
	}
	d.step("APIServices %s are Available", strings.Join(custom, ", "))
	d.step("cpu/memory targets left out: this bin/podpilot does not serve metrics.k8s.io (%s),\n"+
		"and a metric it cannot read would block scale-down; the PodAutoscaler follows zdns_vanguard_qps only", why)
	return nil
}

// without returns names without drop.
func without(names []string, drop string) []string {
	var out []string
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

// probeResourceAPI GETs /apis/metrics.k8s.io/v1beta1 from podpilot itself
// as cluster-admin and returns the status code.
func (d *demo) probeResourceAPI(ctx context.Context) (int, error) {
	hc, err := rest.HTTPClientFor(d.cluster.DirectConfig(d.pp))
	if err != nil {
		return 0, fmt.Errorf("build a client for podpilot: %w", err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/apis/metrics.k8s.io/v1beta1", d.pp.Port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
