package resourcemetrics

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/metrics/pkg/apis/metrics"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// quantityByString compares quantities by their serialized form, so that the unit (millicores,
// bytes) is checked too.
var quantityByString = cmp.Comparer(func(a, b resource.Quantity) bool { return a.String() == b.String() })

func usageOf(cpu, memory string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if cpu != "" {
		out[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		out[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return out
}

func podMetrics(ns, name string, ts time.Time, containers ...metrics.ContainerMetrics) metrics.PodMetrics {
	return metrics.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(testNow)},
		Timestamp:  metav1.NewTime(ts),
		Window:     metav1.Duration{Duration: 3 * time.Minute},
		Containers: containers,
	}
}

func container(name, cpu, memory string) metrics.ContainerMetrics {
	return metrics.ContainerMetrics{Name: name, Usage: usageOf(cpu, memory)}
}

// seedPodVectors: p1 runs app and sidecar, p2 runs app; ts is the evaluation time.
func seedPodVectors(ts time.Time) map[string]model.Vector {
	return map[string]model.Vector{
		podCPU: {
			sample(0.25, ts, "namespace", "ns", "pod", "p1", "container", "app"),
			sample(0.0015, ts, "namespace", "ns", "pod", "p1", "container", "sidecar"),
			sample(1.5, ts, "namespace", "ns", "pod", "p2", "container", "app"),
		},
		podMemory: {
			sample(64<<20, ts, "namespace", "ns", "pod", "p1", "container", "app"),
			sample(1<<20, ts, "namespace", "ns", "pod", "p1", "container", "sidecar"),
			sample(512<<20, ts, "namespace", "ns", "pod", "p2", "container", "app"),
		},
	}
}

func TestListPodMetrics(t *testing.T) {
	ts := testNow.Add(-10 * time.Second)
	p1 := podMetrics("ns", "p1", ts, container("app", "250m", "64Mi"), container("sidecar", "2m", "1Mi"))
	p2 := podMetrics("ns", "p2", ts, container("app", "1500m", "512Mi"))
	pods := []*metav1.PartialObjectMetadata{
		object("ns", "p1", map[string]string{"app": "a"}),
		object("ns", "p2", map[string]string{"app": "b"}),
		object("other", "q1", map[string]string{"app": "a"}),
	}
	gone := model.Vector{sample(0.5, ts, "pod", "deleted", "container", "app")}
	pending := model.Vector{sample(0.5, ts, "pod", "init", "container", "setup")}
	cases := []struct {
		name      string
		namespace string
		opts      *metainternalversion.ListOptions
		// rules are the resource rules; testRules when empty.
		rules   string
		vectors map[string]model.Vector
		want    []metrics.PodMetrics
		// wantQuery is in every query made; wantQueries is how many were made.
		wantQuery   string
		wantQueries int
	}{
		{
			name:      "a namespace without a label selector is one query per resource for every pod, grouped by pod and container, cpu in millicores and memory in bytes",
			namespace: "ns", vectors: seedPodVectors(ts),
			want: []metrics.PodMetrics{p1, p2}, wantQuery: `namespace="ns",pod!=""`, wantQueries: 2,
		},
		{
			name:      "a namespace without a label selector leaves out a pod the lister no longer has",
			namespace: "ns", vectors: map[string]model.Vector{podCPU: append(seedPodVectors(ts)[podCPU], gone...), podMemory: seedPodVectors(ts)[podMemory]},
			want: []metrics.PodMetrics{p1, p2}, wantQuery: `namespace="ns",pod!=""`, wantQueries: 2,
		},
		{
			name:      "a pod that is not Running (here Pending, with init container samples) is not listed, as in prometheus-adapter and metrics-server",
			namespace: "ns", vectors: map[string]model.Vector{podCPU: append(seedPodVectors(ts)[podCPU], pending...), podMemory: seedPodVectors(ts)[podMemory]},
			want: []metrics.PodMetrics{p1, p2}, wantQuery: `namespace="ns",pod!=""`, wantQueries: 2,
		},
		{
			name:      "a namespace is asked by pod name when a container query is not separable (it reads .LabelValuesByName)",
			namespace: "ns", rules: strings.ReplaceAll(testRules, `container!="",<<.LabelMatchers>>`, `namespace="ns",container!="",pod=~"<<index .LabelValuesByName "pod">>"`),
			vectors: seedPodVectors(ts), want: []metrics.PodMetrics{p1, p2}, wantQuery: `pod=~"p1|p2"`, wantQueries: 2,
		},
		{
			name:      "a label selector queries the lister's matching pods by name and drops other pods in the result",
			namespace: "ns", opts: &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "a"})},
			vectors: seedPodVectors(ts), want: []metrics.PodMetrics{p1}, wantQuery: `namespace="ns",pod="p1"`, wantQueries: 2,
		},
		{
			name:      "a field selector on metadata.name filters the result",
			namespace: "ns", opts: &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "p2")},
			vectors: seedPodVectors(ts), want: []metrics.PodMetrics{p2}, wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:    "every namespace queries each namespace of the lister's pods by name",
			vectors: seedPodVectors(ts), want: []metrics.PodMetrics{p1, p2}, wantQuery: `namespace=`, wantQueries: 4,
		},
		{
			name:      "a container with only a cpu sample keeps only cpu",
			namespace: "ns", vectors: map[string]model.Vector{podCPU: {sample(0.1, ts, "pod", "p1", "container", "app")}},
			want: []metrics.PodMetrics{podMetrics("ns", "p1", ts, container("app", "100m", ""))}, wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:      "the pod timestamp is its oldest sample's",
			namespace: "ns",
			vectors: map[string]model.Vector{
				podCPU:    {sample(0.1, ts, "pod", "p1", "container", "app")},
				podMemory: {sample(1024, ts.Add(-time.Minute), "pod", "p1", "container", "app")},
			},
			want:      []metrics.PodMetrics{podMetrics("ns", "p1", ts.Add(-time.Minute), container("app", "100m", "1Ki"))},
			wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:      "samples without a pod or container label are skipped",
			namespace: "ns",
			vectors: map[string]model.Vector{podCPU: {
				sample(0.1, ts, "container", "app"), sample(0.1, ts, "pod", "p1"),
			}},
			want: []metrics.PodMetrics{}, wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:      "a NaN sample zeroes that container's value and keeps the sample's timestamp (prometheus-adapter)",
			namespace: "ns",
			vectors: map[string]model.Vector{
				podCPU:    {sample(nan(), ts.Add(-time.Minute), "pod", "p2", "container", "app")},
				podMemory: {sample(1024, ts, "pod", "p2", "container", "app")},
			},
			want:      []metrics.PodMetrics{podMetrics("ns", "p2", ts.Add(-time.Minute), container("app", "0", "1Ki"))},
			wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:      "a negative sample is clamped to 0 (prometheus-adapter)",
			namespace: "ns",
			vectors: map[string]model.Vector{
				podCPU:    {sample(-0.5, ts, "pod", "p2", "container", "app")},
				podMemory: {sample(-1024, ts, "pod", "p2", "container", "app")},
			},
			want:      []metrics.PodMetrics{podMetrics("ns", "p2", ts, container("app", "0", "0"))},
			wantQuery: `pod!=""`, wantQueries: 2,
		},
		{
			name:      "an infinite sample is skipped (prometheus-adapter's integer conversion of it is undefined)",
			namespace: "ns",
			vectors:   map[string]model.Vector{podCPU: {sample(math.Inf(1), ts, "pod", "p2", "container", "app")}},
			want:      []metrics.PodMetrics{}, wantQuery: `pod!=""`, wantQueries: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prom := &fakeProm{vectors: tc.vectors}
			rq := compileRules(t)
			if tc.rules != "" {
				rq = compileRulesFrom(t, tc.rules)
			}
			phases := map[string]corev1.PodPhase{"init": corev1.PodPending}
			s := &podStorage{p: fixture{prom: prom, rules: rq, pods: append(pods, object("ns", "init", nil)), phases: phases}.provider(t)}
			ctx := genericapirequest.WithNamespace(t.Context(), tc.namespace)
			obj, err := s.List(ctx, tc.opts)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			got := obj.(*metrics.PodMetricsList).Items
			if diff := cmp.Diff(tc.want, got, quantityByString); diff != "" {
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

func nan() float64 {
	var zero float64
	return zero / zero
}

func TestGetPodMetrics(t *testing.T) {
	ts := testNow.Add(-10 * time.Second)
	cases := []struct {
		name        string
		pod         string
		err         error
		rulesGone   bool
		want        *metrics.PodMetrics
		wantCode    int
		wantFrag    []string
		wantQueries int
	}{
		{
			name: "a pod is one query per resource by its name",
			pod:  "p2", want: ptr(podMetrics("ns", "p2", ts, container("app", "1500m", "512Mi"))), wantCode: http.StatusOK, wantQueries: 2,
		},
		{
			name: "a pod without samples is a 404 naming it",
			pod:  "p3", wantCode: http.StatusNotFound, wantFrag: []string{`podmetrics.metrics.k8s.io "p3" not found`}, wantQueries: 2,
		},
		{
			name: "a pod the lister does not hold is a 404 without a query",
			pod:  "missing", wantCode: http.StatusNotFound, wantFrag: []string{`podmetrics.metrics.k8s.io "missing" not found`},
		},
		{
			name: "a pod that is not Running is a 404 without a query, as in prometheus-adapter and metrics-server",
			pod:  "init", wantCode: http.StatusNotFound, wantFrag: []string{`podmetrics.metrics.k8s.io "init" not found`},
		},
		{
			name: "Prometheus unavailable is a 503 with the cause, not an empty usage",
			pod:  "p1", err: fmt.Errorf("query: %w: connection refused", prometheus.ErrUnavailable),
			wantCode: http.StatusServiceUnavailable, wantFrag: []string{"metrics of pod ns/p1", "connection refused"}, wantQueries: 1,
		},
		{
			name: "resource rules removed by a reload is a 503",
			pod:  "p1", rulesGone: true,
			wantCode: http.StatusServiceUnavailable, wantFrag: []string{"no resourceRules"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prom := &fakeProm{vectors: onlyPod(seedPodVectors(ts), "p2"), err: tc.err}
			f := fixture{prom: prom, rules: compileRules(t), phases: map[string]corev1.PodPhase{"init": corev1.PodPending},
				pods: []*metav1.PartialObjectMetadata{object("ns", "p1", nil), object("ns", "p2", nil), object("ns", "p3", nil), object("ns", "init", nil)}}
			if tc.rulesGone {
				f.rules = nil
			}
			s := &podStorage{p: f.provider(t)}
			obj, err := s.Get(genericapirequest.WithNamespace(t.Context(), "ns"), tc.pod, &metav1.GetOptions{})
			checkStatus(t, err, tc.wantCode, tc.wantFrag...)
			if len(prom.queries) != tc.wantQueries {
				t.Errorf("queries = %q, want %d", prom.queries, tc.wantQueries)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(tc.want, obj, quantityByString); diff != "" {
				t.Errorf("pod metrics (-want +got):\n%s", diff)
			}
			if len(prom.queries) != 2 || !strings.Contains(prom.queries[0], `pod="p2"`) {
				t.Errorf("queries = %q, want 2 by name", prom.queries)
			}
		})
	}
}

// onlyPod keeps the samples of one pod, as Prometheus answers a query by name.
func onlyPod(vectors map[string]model.Vector, pod string) map[string]model.Vector {
	out := map[string]model.Vector{}
	for series, vec := range vectors {
		for _, s := range vec {
			if string(s.Metric["pod"]) == pod {
				out[series] = append(out[series], s)
			}
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestListPodMetricsErrors(t *testing.T) {
	prom := &fakeProm{err: fmt.Errorf("query: %w: timeout", prometheus.ErrUnavailable)}
	s := &podStorage{p: fixture{prom: prom, rules: compileRules(t), pods: []*metav1.PartialObjectMetadata{object("ns", "p1", nil)}}.provider(t)}
	_, err := s.List(genericapirequest.WithNamespace(t.Context(), "ns"), nil)
	checkStatus(t, err, http.StatusServiceUnavailable, `pods matching "" in namespace "ns"`, "timeout")
}
