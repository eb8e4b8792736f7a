package resourcemetrics

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/metrics"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

func nodeMetrics(name string, ts time.Time, cpu, memory string) metrics.NodeMetrics {
	return metrics.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(testNow)},
		Timestamp:  metav1.NewTime(ts),
		Window:     metav1.Duration{Duration: 3 * time.Minute},
		Usage:      usageOf(cpu, memory),
	}
}

func seedNodeVectors(ts time.Time) map[string]model.Vector {
	return map[string]model.Vector{
		// n3 is gone from the cluster; Prometheus still has its last samples.
		nodeCPU:    {sample(3.5, ts, "node", "n1"), sample(0.75, ts, "node", "n2"), sample(1, ts, "node", "n3")},
		nodeMemory: {sample(8<<30, ts, "node", "n1"), sample(2<<30, ts, "node", "n2"), sample(1<<30, ts, "node", "n3")},
	}
}

func TestNodeMetrics(t *testing.T) {
	ts := testNow.Add(-5 * time.Second)
	n1, n2 := nodeMetrics("n1", ts, "3500m", "8Gi"), nodeMetrics("n2", ts, "750m", "2Gi")
	nodes := []*metav1.PartialObjectMetadata{
		object("", "n1", map[string]string{"pool": "big"}),
		object("", "n2", map[string]string{"pool": "small"}),
	}
	cases := []struct {
		name        string
		opts        *metainternalversion.ListOptions
		want        []metrics.NodeMetrics
		wantQuery   string
		wantQueries int
	}{
		{
			name: "without a label selector only the nodes the node lister knows are listed, by name (prometheus-adapter lists the nodes first)",
			want: []metrics.NodeMetrics{n1, n2}, wantQuery: `node=~"n1|n2"`, wantQueries: 2,
		},
		{
			name: "a label selector queries the lister's matching nodes by name",
			opts: &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"pool": "small"})},
			want: []metrics.NodeMetrics{n2}, wantQuery: `node="n2"`, wantQueries: 2,
		},
		{
			name: "a label selector matching no node queries nothing",
			opts: &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"pool": "none"})},
			want: []metrics.NodeMetrics{}, wantQueries: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prom := &fakeProm{vectors: seedNodeVectors(ts)}
			s := &nodeStorage{p: fixture{prom: prom, rules: compileRules(t), nodes: nodes}.provider(t)}
			obj, err := s.List(t.Context(), tc.opts)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if diff := cmp.Diff(tc.want, obj.(*metrics.NodeMetricsList).Items, quantityByString); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if len(prom.queries) != tc.wantQueries {
				t.Errorf("made %d queries, want %d: %q", len(prom.queries), tc.wantQueries, prom.queries)
			}
			for _, q := range prom.queries {
				if !strings.Contains(q, tc.wantQuery) {
					t.Errorf("query %q does not contain %q", q, tc.wantQuery)
				}
			}
		})
	}
}

func TestGetNodeMetrics(t *testing.T) {
	ts := testNow.Add(-5 * time.Second)
	cases := []struct {
		name     string
		node     string
		err      error
		want     *metrics.NodeMetrics
		wantCode int
		wantFrag []string
		// wantQueries is checked for the cases without a want.
		wantQueries int
	}{
		{name: "a node is one query per resource by its name", node: "n1", want: ptr(nodeMetrics("n1", ts, "3500m", "8Gi")), wantCode: http.StatusOK},
		{name: "a node without samples is a 404 naming it", node: "idle", wantCode: http.StatusNotFound, wantFrag: []string{`nodemetrics.metrics.k8s.io "idle" not found`}, wantQueries: 2},
		{
			name: "only objects that exist are served: a node the lister no longer holds is a 404 without a query while Prometheus still has its samples (as List leaves it out)",
			node: "n3", wantCode: http.StatusNotFound, wantFrag: []string{`nodemetrics.metrics.k8s.io "n3" not found`},
		},
		{
			name: "Prometheus unavailable is a 503 with the cause", node: "n1",
			err:      fmt.Errorf("query: %w: no route to host", prometheus.ErrUnavailable),
			wantCode: http.StatusServiceUnavailable, wantFrag: []string{"metrics of node n1", "no route to host"}, wantQueries: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prom := &fakeProm{vectors: seedNodeVectors(ts), err: tc.err}
			// n3 has samples but is gone from the cluster (seedNodeVectors).
			nodes := []*metav1.PartialObjectMetadata{object("", "n1", nil), object("", "n2", nil), object("", "idle", nil)}
			s := &nodeStorage{p: fixture{prom: prom, rules: compileRules(t), nodes: nodes}.provider(t)}
			obj, err := s.Get(t.Context(), tc.node, &metav1.GetOptions{})
			checkStatus(t, err, tc.wantCode, tc.wantFrag...)
			if tc.want == nil {
				if len(prom.queries) != tc.wantQueries {
					t.Errorf("queries = %q, want %d", prom.queries, tc.wantQueries)
				}
				return
			}
			if diff := cmp.Diff(tc.want, obj, quantityByString); diff != "" {
				t.Errorf("node metrics (-want +got):\n%s", diff)
			}
			if len(prom.queries) != 2 || !strings.Contains(prom.queries[1], `node="n1"`) {
				t.Errorf("queries = %q, want 2 by name", prom.queries)
			}
		})
	}
}
