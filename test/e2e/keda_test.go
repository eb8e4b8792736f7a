//go:build keda

package e2e

// The KEDA tier (make test-keda): KEDA's operator and metrics server, built from their Go module
// (hack/tools/keda, `hack/build-tools.sh keda`, about 10 minutes cold), beside a podpilot that
// owns v1beta1.external.metrics.k8s.io and forwards to KEDA. make test runs it in the second stream
// of hack/test-e2e.sh; make test-keda alone (docs/testing.md).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestKEDAScaledObjectAndPodAutoscalerThroughOneAPIService runs KEDA v2 (operator and metrics
// server, on the host) beside a podpilot that owns v1beta1.external.metrics.k8s.io with
// --external-metrics-forward-url to KEDA's metrics server. A ScaledObject on KEDA's Prometheus
// scaler (the cluster's Prometheus) gets its HPA from KEDA's operator; that HPA reads KEDA's
// metric through the one APIService, that is through podpilot's forward, and scales its
// Deployment to ceil(44/10) = 5. A PodAutoscaler on podpilot's own external metric scales its
// Deployment to ceil(30/10) = 3. Then KEDA's metrics server stops: podpilot's own metric is still
// served and podpilot stays ready, a forwarded read is a 503 naming the unreachable adapter, the
// ScaledObject's HPA and the PodAutoscaler hold their replicas, and the PodAutoscaler still
// follows its own metric (50 → 5).
func TestKEDAScaledObjectAndPodAutoscalerThroughOneAPIService(t *testing.T) {
	ctx := t.Context()
	if err := cluster.InstallKEDACRDs(ctx); err != nil {
		t.Fatal(err)
	}
	keda, err := cluster.StartKEDA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(keda.Stop)
	t.Logf("KEDA logs: %s, %s", keda.OperatorLog(), keda.MetricsServerLog())
	// In the shared podpilot's place, so that it also runs the autoscaler (for the PodAutoscaler).
	p := takeOver(ctx, t, 1, fmt.Sprintf("--external-metrics-forward-url=https://127.0.0.1:%d", keda.Port),
		"--external-metrics-forward-ca-file="+keda.CAFile, "--external-metrics-forward-timeout=3s")[0]

	ns := cluster.CreateNamespace(ctx, t, "keda")
	exp := serveExporter(t)
	exp.SetGauge("orders_pending", map[string]string{"namespace": ns}, 44) // read by KEDA's Prometheus scaler
	exp.SetGauge("zdns_upstream_pending_queries", map[string]string{"namespace": ns, "upstream": "a"}, 30)
	startWorkload(ctx, t, ns, "keda-scaled", 1)
	startWorkload(ctx, t, ns, "podpilot-scaled", 1)
	cluster.Apply(ctx, t, ns, scaledObjectYAML("keda-scaled", strings.TrimSuffix(cluster.PrometheusURL, "/"),
		fmt.Sprintf(`sum(orders_pending{namespace=%q})`, ns), 10))
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("podpilot-scaled", "deployment", "podpilot-scaled", 1, 8, `  externalMetrics:
  - metricName: zdns_upstream_pending_queries
    selector: {matchLabels: {upstream: a}}
    targetType: AverageValue
    averageValue: "10"
`))

	hpaMetric := waitKEDAHPA(ctx, t, ns, "keda-scaled")
	forwarded := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/" + hpaMetric.Name +
		"?labelSelector=" + url.QueryEscape(metav1.FormatLabelSelector(hpaMetric.Selector))
	own := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/zdns_upstream_pending_queries?labelSelector=" + url.QueryEscape("upstream=a")
	waitExternalDiscovery(ctx, t)
	for path, want := range map[string]float64{own: 30, forwarded: 44} {
		framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("%v from %s", want, path), func(ctx context.Context) (bool, string, error) {
			l, err := getMetrics(ctx, path)
			if err != nil {
				return false, err.Error(), nil
			}
			return len(l.Items) == 1 && quantity(l.Items[0].Value) == want, fmt.Sprintf("%+v", l.Items), nil
		})
	}
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "keda-scaled", 5)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "podpilot-scaled", 3)

	keda.StopMetricsServer()
	framework.WaitFor(ctx, t, time.Minute, "a forwarded read is a 503 naming KEDA's metrics server", func(ctx context.Context) (bool, string, error) {
		_, err := getMetrics(ctx, forwarded)
		msg := fmt.Sprintf("%v", err)
		return statusCode(err) == http.StatusServiceUnavailable && strings.Contains(msg, hpaMetric.Name) &&
			strings.Contains(msg, fmt.Sprintf("127.0.0.1:%d", keda.Port)), msg, nil
	})
	l, err := getMetrics(ctx, own)
	if err != nil || len(l.Items) != 1 || quantity(l.Items[0].Value) != 30 {
		t.Fatalf("podpilot's own metric with KEDA's metrics server down: %+v, %v", l, err)
	}
	if code, body, err := p.Get(ctx, "/readyz"); err != nil || code != http.StatusOK {
		t.Fatalf("podpilot's /readyz with KEDA's metrics server down: %d %s %v", code, body, err)
	}
	cluster.HoldReplicas(ctx, t, 10*time.Second, "Deployment", ns, "podpilot-scaled", 3)
	cluster.HoldReplicas(ctx, t, 5*time.Second, "Deployment", ns, "keda-scaled", 5) // the HPA holds on failed reads
	exp.SetGauge("zdns_upstream_pending_queries", map[string]string{"namespace": ns, "upstream": "a"}, 50)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "podpilot-scaled", 5)
}

// scaledObjectYAML is a ScaledObject on KEDA's Prometheus scaler: query against prometheusURL,
// an AverageValue target of threshold per replica, 1 to 10 replicas of Deployment name.
func scaledObjectYAML(name, prometheusURL, query string, threshold int) []byte {
	return fmt.Appendf(nil, `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: %s}
spec:
  scaleTargetRef: {name: %s}
  pollingInterval: 5
  minReplicaCount: 1
  maxReplicaCount: 10
  triggers:
  - type: prometheus
    metadata:
      serverAddress: %s
      query: %s
      threshold: "%d"
`, name, name, prometheusURL, query, threshold)
}

// waitKEDAHPA waits until KEDA's operator has made the ScaledObject's HPA (keda-hpa-NAME) with
// one external metric, and returns that metric (its name and selector are KEDA's to choose).
func waitKEDAHPA(ctx context.Context, t *testing.T, ns, name string) autoscalingv2.MetricIdentifier {
	t.Helper()
	var id autoscalingv2.MetricIdentifier
	framework.WaitFor(ctx, t, 2*time.Minute, "KEDA's HPA for ScaledObject "+name, func(ctx context.Context) (bool, string, error) {
		hpa, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "keda-hpa-"+name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].External == nil {
			return false, fmt.Sprintf("metrics %+v", hpa.Spec.Metrics), nil
		}
		id = hpa.Spec.Metrics[0].External.Metric
		return true, "", nil
	})
	return id
}
