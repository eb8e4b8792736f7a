package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

func TestDeploymentPodsRunOnKwokNode(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "kwok")
	d := cluster.Deployment("web", 3)
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	framework.WaitFor(ctx, t, time.Minute, "3 Running and Ready pods on the kwok node", func(ctx context.Context) (bool, string, error) {
		pods, err := cluster.RunningPods(ctx, ns, "web")
		if err != nil {
			return false, "", err
		}
		for _, p := range pods {
			if p.Spec.NodeName != cluster.KwokNode {
				return false, "", fmt.Errorf("pod %s on node %q", p.Name, p.Spec.NodeName)
			}
		}
		return len(pods) == 3, fmt.Sprintf("%d running and ready", len(pods)), nil
	})
}

func prometheusAPI(t *testing.T) promv1.API {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: cluster.PrometheusURL})
	if err != nil {
		t.Fatalf("prometheus client: %v", err)
	}
	return promv1.NewAPI(c)
}

// queryValue returns the single value of an instant query, or ok=false if the
// result is empty.
func queryValue(ctx context.Context, prom promv1.API, q string) (float64, bool, error) {
	v, _, _, err := prom.Query(ctx, q, time.Time{})
	if err != nil {
		return 0, false, fmt.Errorf("query %s: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) == 0 {
		return 0, false, nil
	}
	return float64(vec[0].Value), true, nil
}

func TestExporterSeriesVisibleInPrometheus(t *testing.T) {
	ctx := t.Context()
	srv, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	name := "visible-" + strings.ReplaceAll(srv.Addr, ":", "-")
	labels := map[string]string{"namespace": "team-a", "pod": "vg1-vanguard-0"}
	srv.SetGauge("zdns_vanguard_qps", labels, 1234)
	if err := srv.RegisterTarget(cluster.TargetsDir, name); err != nil {
		t.Fatal(err)
	}
	prom := prometheusAPI(t)
	sel := `zdns_vanguard_qps{namespace="team-a",pod="vg1-vanguard-0",exporter="` + name + `"}`
	framework.WaitFor(ctx, t, 30*time.Second, "Prometheus to discover and scrape the exporter", func(ctx context.Context) (bool, string, error) {
		v, ok, err := queryValue(ctx, prom, sel)
		return ok && v == 1234, fmt.Sprintf("value %v (present %v)", v, ok), err
	})

	// Once scraped, a new value shows within one scrape interval (1s here);
	// the bound leaves room for a loaded CI machine.
	srv.SetGauge("zdns_vanguard_qps", labels, 4321)
	framework.WaitFor(ctx, t, 5*time.Second, "the new value in Prometheus", func(ctx context.Context) (bool, string, error) {
		v, ok, err := queryValue(ctx, prom, sel)
		return ok && v == 4321, fmt.Sprintf("value %v (present %v)", v, ok), err
	})
}

func TestPodpilotServesHealthEndpoints(t *testing.T) {
	ctx := t.Context()
	p := cluster.StartPodpilot(t, podpilotBinary)
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		framework.WaitFor(ctx, t, 30*time.Second, "podpilot "+path+" to answer ok", func(ctx context.Context) (bool, string, error) {
			if p.Exited() {
				t.Fatalf("podpilot exited; log: %s", p.LogPath)
			}
			code, body, err := p.Get(ctx, path)
			return code == 200 && strings.TrimSpace(body) == "ok", fmt.Sprintf("%d %q", code, body), err
		})
	}
}
