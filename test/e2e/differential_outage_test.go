package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// TestDifferentialMetricsOutageLongerThanTheWindow (issue 22): a metrics
// outage longer than the scale-down stabilization window, then recovery.
// Upstream records no recommendation while metrics fail, so the ones made
// before the outage age out of the window during it, and at recovery the
// stock HPA goes straight to the new recommendation. Both autoscalers read
// through one podpilot pointed at a Prometheus proxy, which answers 503 for
// the outage: kube-controller-manager's HPA through the aggregated API, the
// PodAutoscaler in-process.
func TestDifferentialMetricsOutageLongerThanTheWindow(t *testing.T) {
	ctx := t.Context()
	kcm, err := cluster.HPAController()
	if err != nil {
		t.Fatal(err)
	}
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	// The default rules and resourceRules: takeOver waits for every metrics API, metrics.k8s.io too.
	if err := os.WriteFile(rulesFile, []byte(rules.DefaultYAML+framework.ResourceRulesYAML()), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.StartPrometheusProxy(t)
	args := append(kcm.PodpilotArgs(), "--config="+rulesFile, "--prometheus-url="+proxy.URL, "--prometheus-timeout=2s", shareMaxAgeArg)
	t.Logf("kube-controller-manager's HPA settings: %+v; podpilot's autoscaler runs with %s", kcm, strings.Join(args, " "))
	takeOver(ctx, t, 1, args...)
	runDifferential(t, outageCase(proxy))
}

// outageCase: a Pods metric (100 per pod targeted) at 9 replicas' worth,
// then the load drops to 3 replicas' worth while Prometheus answers 503 for
// 90 s, longer than the 60 s scale-down stabilization window. A negative
// level is the load during the outage.
func outageCase(proxy *framework.PrometheusProxy) differentialCase {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: scalingRules(60, autoscalingv2.PercentScalingPolicy, 100, 15),
	}
	c := podsMetricCase("metrics outage longer than the scale-down window", behavior, []differentialStep{
		{900, 50 * time.Second, 9, "900 at 100 per pod: 9"},
		{-300, 90 * time.Second, 9, "outage (Prometheus answers 503) for 90 s while the load drops to 300: both hold 9"},
		{300, 30 * time.Second, 3, "recovered: the 9s are older than the 60 s window, so 3 at once (podpilot before #22 held 9 for another window)"},
	})
	drive := c.drive
	c.drive = func(ctx context.Context, t *testing.T, ns string, exp *exporter.Server, apps []string) func(float64) {
		set := drive(ctx, t, ns, exp, apps)
		return func(level float64) {
			if level < 0 {
				proxy.Set(framework.Fault{Status: http.StatusServiceUnavailable})
				set(-level)
				return
			}
			proxy.Set(framework.Fault{})
			set(level)
		}
	}
	return c
}
