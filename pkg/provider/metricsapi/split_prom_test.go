package metricsapi

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// lengthsClient is a prometheus.Client that records the length of every instant query.
type lengthsClient struct {
	prometheus.Client
	mu      sync.Mutex
	longest int
	queries int
}

func (c *lengthsClient) QueryLabels(ctx context.Context, q string, at time.Time, lbls []string) ([]prometheus.Sample, error) {
	c.mu.Lock()
	c.queries++
	c.longest = max(c.longest, len(q))
	c.mu.Unlock()
	return c.Client.QueryLabels(ctx, q, at, lbls)
}

// backfillGauge writes the gauge http_requests of every pod of namespace shop (value: the pod's
// index plus a quarter), and of the first pod in namespace other, every 15 s for the last 10
// minutes (and of a pod "discovered" at testNow, for discovery), as TSDB blocks, and returns the TSDB's directory.
func backfillGauge(t *testing.T, pods []string) string {
	t.Helper()
	return backfill(t, func(w *bufio.Writer) {
		end := time.Now().Truncate(15 * time.Second)
		fmt.Fprint(w, "# TYPE http_requests gauge\n")
		// Discovery runs on the test clock, at testNow.
		fmt.Fprintf(w, "http_requests{namespace=\"shop\",pod=\"discovered\"} 0 %d\n", testNow.Unix())
		for i, pod := range pods {
			for at := end.Add(-10 * time.Minute); !at.After(end); at = at.Add(15 * time.Second) {
				fmt.Fprintf(w, "http_requests{namespace=\"shop\",pod=%q} %g %d\n", pod, float64(i)+0.25, at.Unix())
			}
		}
		fmt.Fprintf(w, "http_requests{namespace=\"other\",pod=%q} 1e6 %d\n# EOF\n", pods[0], end.Unix())
	})
}

// TestASplitAnswerFromARealPrometheusIsTheUnsplitAnswer asks a real Prometheus, on a backfilled
// TSDB, for a 5,000-pod Deployment's metric through a rule asked by name: split under the
// default --metrics-max-query-bytes, every query fits VictoriaMetrics' default limit and the
// merged answer is, pod by pod and in order, the one query's answer.
func TestASplitAnswerFromARealPrometheusIsTheUnsplitAnswer(t *testing.T) {
	for _, tool := range []string{"promtool", "prometheus"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: `make prometheus` (hack/install-prometheus.sh) installs it, as `make test-unit` does", tool)
		}
	}
	pods := podcachetest.DeploymentPodNames(5000)
	prom := servePrometheus(t, backfillGauge(t, pods))
	info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "http_requests"}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	ask := func(maxBytes int) (*custom_metrics.MetricValueList, *lengthsClient) {
		c := &lengthsClient{Client: prom}
		p := largeTarget(t, c, pods, rulesFile(t, byNameRules), maxBytes, false)
		list, err := p.GetMetricBySelector(t.Context(), "shop", web, info, labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		return list, c
	}
	split, splitClient := ask(rules.DefaultMaxQueryBytes)
	whole, wholeClient := ask(1 << 20)
	t.Logf("5,000 pods from Prometheus: unsplit %d query of %d bytes; split %d queries, the longest %d bytes",
		wholeClient.queries, wholeClient.longest, splitClient.queries, splitClient.longest)
	if splitClient.longest > victoriaMetricsMaxQueryLen || splitClient.queries < 2 {
		t.Errorf("%d queries, the longest %d bytes: want several, each within %d", splitClient.queries, splitClient.longest, victoriaMetricsMaxQueryLen)
	}
	if len(whole.Items) != len(pods) || len(split.Items) != len(whole.Items) {
		t.Fatalf("%d values split, %d unsplit, want %d", len(split.Items), len(whole.Items), len(pods))
	}
	for i, w := range whole.Items {
		s := split.Items[i]
		// Timestamps are each query's evaluation time (Prometheus's now): they differ.
		if s.DescribedObject.Name != w.DescribedObject.Name || s.Value.Cmp(w.Value) != 0 {
			t.Fatalf("value %d: split %s = %s, unsplit %s = %s", i, s.DescribedObject.Name, s.Value.String(),
				w.DescribedObject.Name, w.Value.String())
		}
	}
}
