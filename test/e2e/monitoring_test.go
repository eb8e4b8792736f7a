package e2e

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// scrape is one parse of podpilot's /metrics.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads the shared podpilot's /metrics, as cluster-admin (the
// path is authorized like any other).
func scrapeMetrics(ctx context.Context, t *testing.T) scrape {
	t.Helper()
	direct, err := kubernetes.NewForConfig(cluster.DirectConfig(metricsServer))
	if err != nil {
		t.Fatal(err)
	}
	b, err := direct.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// value sums the samples of name whose labels include want (a histogram's
// sample count, a counter's or gauge's value); found is false without any.
func (s scrape) value(name string, want map[string]string) (sum float64, found bool) {
	mf := s[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		found = true
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// names returns the sample names the scrape exposes: family names, and a
// histogram's _bucket, _sum and _count.
func (s scrape) names() map[string]bool {
	out := map[string]bool{}
	for name, mf := range s {
		out[name] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			out[name+"_bucket"], out[name+"_sum"], out[name+"_count"] = true, true, true
		}
	}
	return out
}

const (
	hpaMetrics = "podpilot_horizontal_pod_autoscaler_controller_"
	paMetrics  = "podpilot_podautoscaler_"
)

// TestMonitoringAfterAScaleUp drives a PodAutoscaler through a scale-up and
// checks the values of the autoscaler's metrics on /metrics (counts as
// deltas, since the podpilot is shared), its per-PodAutoscaler series and
// their removal with the object, and the API server's request metrics.
func TestMonitoringAfterAScaleUp(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "monitoring")
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, cluster.Deployment("vg1-vanguard", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(1500)
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("hpa-vg1-vanguard", "deployment", "vg1-vanguard", 1, 5, "zdns_vanguard_qps", "2000", ""))
	waitPodAutoscalerCondition(ctx, t, ns, "hpa-vg1-vanguard", "ScalingActive", metav1.ConditionTrue)

	before := scrapeMetrics(ctx, t)
	load.Set(7000) // ceil(7000/2000) = 4
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 4)

	obj := map[string]string{"namespace": ns, "name": "hpa-vg1-vanguard"}
	metric := map[string]string{"namespace": ns, "name": "hpa-vg1-vanguard", "metric": "zdns_vanguard_qps",
		"metric_type": "Custom", "target_type": "AverageValue"}
	var after scrape
	framework.WaitFor(ctx, t, time.Minute, "per-PodAutoscaler series at 4 replicas and 1750 per pod", func(ctx context.Context) (bool, string, error) {
		after = scrapeMetrics(ctx, t)
		desired, _ := after.value(paMetrics+"desired_replicas", obj)
		current, _ := after.value(paMetrics+"current_replicas", obj)
		v, _ := after.value(paMetrics+"metric_value", metric)
		return desired == 4 && current == 4 && math.Abs(v-1750) < 1, fmt.Sprintf("desired %g, current %g, value %g", desired, current, v), nil
	})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{paMetrics + "min_replicas", obj, 1},
		{paMetrics + "max_replicas", obj, 5},
		{paMetrics + "metric_target", metric, 2000},
		{paMetrics + "condition", map[string]string{"namespace": ns, "name": "hpa-vg1-vanguard", "condition": "ScalingActive", "status": "true"}, 1},
		{paMetrics + "condition", map[string]string{"namespace": ns, "name": "hpa-vg1-vanguard", "condition": "ScalingActive", "status": "false"}, 0},
		{paMetrics + "condition", map[string]string{"namespace": ns, "name": "hpa-vg1-vanguard", "condition": "AbleToScale", "status": "true"}, 1},
	} {
		if got, ok := after.value(c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %g (found %t), want %g", c.name, c.labels, got, ok, c.want)
		}
	}
	t.Logf("%s %v = %g", paMetrics+"metric_value", metric, must(after.value(paMetrics+"metric_value", metric)))

	// Deltas over the scale-up: at least one scale_up sync and Pods computation, fetches asked
	// at least as often as made, and rounds timed.
	delta := func(name string, labels map[string]string) float64 {
		a, _ := after.value(name, labels)
		b, _ := before.value(name, labels)
		return a - b
	}
	up := map[string]string{"action": "scale_up", "error": "none"}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{hpaMetrics + "reconciliations_total", up},
		{hpaMetrics + "reconciliation_duration_seconds", up},
		{hpaMetrics + "metric_computation_total", map[string]string{"action": "scale_up", "error": "none", "metric_type": "Pods"}},
		{hpaMetrics + "metric_computation_duration_seconds", map[string]string{"metric_type": "Pods", "error": "none"}},
		{hpaMetrics + "reconciliations_total", map[string]string{"action": "none", "error": "none"}},
		{"podpilot_autoscaler_round_duration_seconds", nil},
		{"podpilot_autoscaler_metric_requests_total", map[string]string{"source": "custom"}},
		{"podpilot_autoscaler_metric_source_calls_total", map[string]string{"source": "custom"}},
	} {
		d := delta(c.name, c.labels)
		t.Logf("Δ %s %v = %g", c.name, c.labels, d)
		if d < 1 {
			t.Errorf("Δ %s%v = %g over the scale-up, want ≥ 1", c.name, c.labels, d)
		}
	}
	asked := must(after.value("podpilot_autoscaler_metric_requests_total", map[string]string{"source": "custom"}))
	made := must(after.value("podpilot_autoscaler_metric_source_calls_total", map[string]string{"source": "custom"}))
	if made > asked {
		t.Errorf("custom metric source calls %g > requests %g", made, asked)
	}
	for _, g := range []string{"podpilot_autoscaler_round_lateness_seconds", "podpilot_autoscaler_queue_depth",
		hpaMetrics + "num_horizontal_pod_autoscalers"} {
		v, ok := after.value(g, nil)
		t.Logf("%s = %g", g, v)
		if !ok || v < 0 {
			t.Errorf("%s = %g (found %t), want a value ≥ 0", g, v, ok)
		}
	}

	t.Run("apiserver request metrics count the metrics API requests", func(t *testing.T) {
		testAPIServerRequestMetrics(t, ns)
	})
	t.Run("the dashboard's expressions parse and name only metrics on /metrics", func(t *testing.T) {
		testDashboard(t, scrapeMetrics(ctx, t))
	})

	if err := podpilotClient(t).AutoscalingV1alpha1().PodAutoscalers(ns).Delete(ctx, "hpa-vg1-vanguard", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(ctx, t, time.Minute, "the deleted PodAutoscaler's series gone", func(ctx context.Context) (bool, string, error) {
		_, found := scrapeMetrics(ctx, t).value(paMetrics+"desired_replicas", obj)
		return !found, "still exported", nil
	})
}

// testAPIServerRequestMetrics sends requests to the custom metrics API through
// the kube-apiserver and checks that apiserver_request_total and
// apiserver_request_duration_seconds count them, and that in-flight requests
// are exported.
func testAPIServerRequestMetrics(t *testing.T, ns string) {
	ctx := t.Context()
	before := scrapeMetrics(ctx, t)
	const n = 5
	for range n {
		if _, err := cluster.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+ns+"/pods/*/zdns_vanguard_qps"); err != nil {
			t.Fatal(err)
		}
	}
	after := scrapeMetrics(ctx, t)
	group := map[string]string{"group": "custom.metrics.k8s.io", "version": "v1beta2"}
	for name, labels := range map[string]map[string]string{
		"apiserver_request_total":            {"group": "custom.metrics.k8s.io", "version": "v1beta2", "code": "200"},
		"apiserver_request_duration_seconds": group,
	} {
		a, ok := after.value(name, labels)
		b, _ := before.value(name, labels)
		t.Logf("%s %v: %g → %g", name, labels, b, a)
		if !ok || a-b < n {
			t.Errorf("%s%v grew by %g over %d requests, want ≥ %d", name, labels, a-b, n, n)
		}
	}
	if v, ok := after.value("apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"}); !ok {
		t.Errorf("apiserver_current_inflight_requests{request_kind=readOnly} not exported")
	} else {
		t.Logf("apiserver_current_inflight_requests{request_kind=readOnly} = %g", v)
	}
}

func must(v float64, _ bool) float64 { return v }

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
