package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
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
// them podpilot serves metrics.k8s.io (cpu and memory) from Prometheus too;
// on the real node, the rules for the kubelet's own cAdvisor series.
func (d *demo) writeRules() (string, error) {
	path := filepath.Join(d.opts.stateDir, "podpilot-rules.yaml")
	resourceRules := framework.ResourceRulesYAML()
	if d.real() {
		resourceRules = framework.KubeletResourceRulesYAML()
	}
	if err := os.WriteFile(path, []byte(rules.DefaultYAML+resourceRules), 0o644); err != nil {
		return "", fmt.Errorf("write rule file %s: %w", path, err)
	}
	return path, nil
}

// demoAPIWait bounds the wait for every API the demo needs.
const demoAPIWait = 2 * time.Minute

// demoAPIPaths are the API groups the seed example needs from podpilot: the per-pod qps
// (custom), the external kind, and cpu and memory (metrics.k8s.io).
var demoAPIPaths = []string{
	"/apis/custom.metrics.k8s.io/v1beta2",
	"/apis/external.metrics.k8s.io/v1beta1",
	"/apis/metrics.k8s.io/v1beta1",
}

// registerAPIs waits, bounded by demoAPIWait, until the running podpilot answers 200 for
// every API group the seed example needs, then registers its APIServices. The demo never
// leaves part of the example out: if one API never answers, it fails naming it.
func (d *demo) registerAPIs(ctx context.Context) error {
	last := map[string]string{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, demoAPIWait, true, func(ctx context.Context) (bool, error) {
		for _, path := range demoAPIPaths {
			if last[path] == "200" {
				continue
			}
			code, err := d.probe(ctx, path)
			last[path] = fmt.Sprint(code)
			if err != nil {
				last[path] = err.Error()
			}
		}
		return len(missingAPIs(last)) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("podpilot does not serve every API the seed example needs within %s: %s: %w",
			demoAPIWait, strings.Join(missingAPIs(last), "; "), err)
	}
	if err := d.cluster.RegisterMetricsAPIs(ctx, d.pp.Port); err != nil {
		return fmt.Errorf("register podpilot's APIServices: %w", err)
	}
	d.resources = true
	d.step("APIServices %s are Available", strings.Join(framework.MetricsAPIServices, ", "))
	return nil
}

// missingAPIs lists the paths whose last answer was not 200, with that answer.
func missingAPIs(last map[string]string) []string {
	var out []string
	for _, path := range demoAPIPaths {
		if last[path] != "200" {
			out = append(out, fmt.Sprintf("GET %s answered %q", path, last[path]))
		}
	}
	return out
}

// probe GETs path from podpilot itself as cluster-admin and returns the status code.
func (d *demo) probe(ctx context.Context, path string) (int, error) {
	hc, err := rest.HTTPClientFor(d.cluster.DirectConfig(d.pp))
	if err != nil {
		return 0, fmt.Errorf("build a client for podpilot: %w", err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d%s", d.pp.Port, path)
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
