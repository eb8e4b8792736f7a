package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestExternalMetricsForwardedToAnotherAdapter runs the custom-metrics-apiserver's test adapter
// (a real external-metrics adapter that builds in seconds; KEDA itself is keda_test.go's) on the host beside a podpilot that owns
// v1beta1.external.metrics.k8s.io and forwards to it: through the one APIService, discovery lists
// both adapters' lists, a forwarded read returns the test adapter's values, and a stock HPA on
// a forwarded metric and one on podpilot's own external metric both scale, as does a PodAutoscaler
// on a forwarded metric. Then the test adapter stops: podpilot's own metric is still served and
// podpilot stays ready, the forwarded one is a 503, and the PodAutoscaler holds its replicas.
func TestExternalMetricsForwardedToAnotherAdapter(t *testing.T) {
	ctx := t.Context()
	other, err := cluster.StartTestAdapter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	// In the shared podpilot's place, so that it also runs the autoscaler (for the PodAutoscaler).
	p := takeOver(ctx, t, 1, fmt.Sprintf("--external-metrics-forward-url=https://127.0.0.1:%d", other.Port),
		"--external-metrics-forward-ca-file="+other.CAFile, "--external-metrics-forward-timeout=3s")[0]

	ns := cluster.CreateNamespace(ctx, t, "fwd")
	exp := serveExporter(t)
	exp.SetGauge("zdns_upstream_pending_queries", map[string]string{"namespace": ns, "upstream": "a"}, 30)
	own := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/zdns_upstream_pending_queries?labelSelector=" + url.QueryEscape("upstream=a")
	forwarded := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/my-external-metric?labelSelector=" + url.QueryEscape("foo=bar")

	waitExternalDiscovery(ctx, t)
	for path, want := range map[string]float64{own: 30, forwarded: 42} {
		framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("%v from %s", want, path), func(ctx context.Context) (bool, string, error) {
			l, err := getMetrics(ctx, path)
			if err != nil {
				return false, err.Error(), nil
			}
			return len(l.Items) == 1 && quantity(l.Items[0].Value) == want, fmt.Sprintf("%+v", l.Items), nil
		})
	}

	// Stock HPAs through the one APIService: other-external-metric is 44 at the test adapter,
	// ceil(44/11) = 4; podpilot's queue is 30, ceil(30/10) = 3.
	startWorkload(ctx, t, ns, "keda-like", 1)
	startWorkload(ctx, t, ns, "podpilot-own", 1)
	hpas := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	for _, h := range []struct {
		name, metric string
		labels       map[string]string
		target       int64
	}{{"keda-like", "other-external-metric", nil, 11}, {"podpilot-own", "zdns_upstream_pending_queries", map[string]string{"upstream": "a"}, 10}} {
		hpa := framework.HPA(h.name, 1, 10, nil, framework.ExternalMetric(h.metric, h.labels, h.target))
		if _, err := hpas.Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create HPA %s: %v", h.name, err)
		}
	}
	// A PodAutoscaler on a forwarded metric, read in-process and forwarded: foo=baz is 43, ceil(43/10) = 5.
	startWorkload(ctx, t, ns, "ppa-forwarded", 1)
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("ppa-forwarded", "deployment", "ppa-forwarded", 1, 8, `  externalMetrics:
  - metricName: my-external-metric
    selector: {matchLabels: {foo: baz}}
    targetType: AverageValue
    averageValue: "10"
`))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "keda-like", 4)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "podpilot-own", 3)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "ppa-forwarded", 5)

	other.Stop()
	framework.WaitFor(ctx, t, time.Minute, "a forwarded read is a 503 with the test adapter down", func(ctx context.Context) (bool, string, error) {
		_, err := getMetrics(ctx, forwarded)
		return statusCode(err) == http.StatusServiceUnavailable, fmt.Sprintf("%v", err), nil
	})
	l, err := getMetrics(ctx, own)
	if err != nil || len(l.Items) != 1 || quantity(l.Items[0].Value) != 30 {
		t.Fatalf("podpilot's own metric with the test adapter down: %+v, %v", l, err)
	}
	if code, body, err := p.Get(ctx, "/readyz"); err != nil || code != http.StatusOK {
		t.Fatalf("podpilot's /readyz with the test adapter down: %d %s %v", code, body, err)
	}
	cluster.HoldReplicas(ctx, t, 10*time.Second, "Deployment", ns, "podpilot-own", 3)
	cluster.HoldReplicas(ctx, t, 5*time.Second, "Deployment", ns, "ppa-forwarded", 5) // held on failed reads
}

// waitExternalDiscovery waits until discovery lists podpilot's external metric and the other
// adapter's list (the custom-metrics-apiserver's test adapter and KEDA's metrics server both list
// the library's placeholder, externalmetrics, not the metrics they serve; podpilot serves no
// metric of that name, so it comes from the other adapter).
func waitExternalDiscovery(ctx context.Context, t *testing.T) {
	t.Helper()
	framework.WaitFor(ctx, t, time.Minute, "discovery lists podpilot's and the other adapter's external metrics", func(ctx context.Context) (bool, string, error) {
		b, err := cluster.RawGet(ctx, "/apis/external.metrics.k8s.io/v1beta1")
		if err != nil {
			return false, "", err
		}
		var rl metav1.APIResourceList
		if err := json.Unmarshal(b, &rl); err != nil {
			return false, "", err
		}
		var names []string
		for _, r := range rl.APIResources {
			names = append(names, r.Name)
		}
		return slices.Contains(names, "zdns_upstream_pending_queries") && slices.Contains(names, "externalmetrics"),
			fmt.Sprintf("%v", names), nil
	})
}
