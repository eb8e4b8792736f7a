package metricsapi

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// tenancyRules serve jobs_pending from two external rules: namespaced (the default) as
// jobs_pending, and marked namespaced: false as cluster_jobs_pending.
const tenancyRules = `externalRules:
- seriesQuery: '{namespace!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: ^jobs_pending$}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
- seriesQuery: '{namespace!=""}'
  resources: {namespaced: false}
  name: {matches: ^jobs_pending$, as: cluster_jobs_pending}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
`

// TestPodAutoscalerReadsOfClusterWideExternalMetrics: an external rule marked namespaced: false
// lets a PodAutoscaler in namespace a read namespace b's series with the selector namespace=b.
// Off by default, as before; --autoscaler-restrict-cluster-external-metrics refuses such reads
// (and the last-sample reads that time rounds) to every namespace but the allowed ones, with a
// 403 and before any query is sent, and leaves namespaced rules and API requests alone.
func TestPodAutoscalerReadsOfClusterWideExternalMetrics(t *testing.T) {
	intoB := labels.SelectorFromSet(labels.Set{"namespace": "b"})
	tests := []struct {
		name      string
		tenancy   *TenancyOptions
		metric    string
		namespace string
		wantCode  int
		wantQuery string
	}{{
		name:      "by default a cluster-wide rule reads another namespace's series",
		tenancy:   NewTenancyOptions(),
		metric:    "cluster_jobs_pending",
		namespace: "a",
		wantCode:  http.StatusOK,
		wantQuery: `sum(jobs_pending{namespace="b"})`,
	}, {
		name:      "restricted, a cluster-wide rule is refused outside the allowed namespaces",
		tenancy:   &TenancyOptions{RestrictClusterExternalMetrics: true, ClusterExternalMetricsNamespaces: []string{"platform"}},
		metric:    "cluster_jobs_pending",
		namespace: "a",
		wantCode:  http.StatusForbidden,
	}, {
		name:      "restricted, an allowed namespace still reads a cluster-wide rule",
		tenancy:   &TenancyOptions{RestrictClusterExternalMetrics: true, ClusterExternalMetricsNamespaces: []string{"platform"}},
		metric:    "cluster_jobs_pending",
		namespace: "platform",
		wantCode:  http.StatusOK,
		wantQuery: `sum(jobs_pending{namespace="b"})`,
	}, {
		name:      "restricted, a namespaced rule reads its own namespace only, as always",
		tenancy:   &TenancyOptions{RestrictClusterExternalMetrics: true},
		metric:    "jobs_pending",
		namespace: "a",
		wantCode:  http.StatusOK,
		wantQuery: `sum(jobs_pending{namespace="b",namespace="a"})`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{
				series: map[string][]model.LabelSet{`{namespace!=""}`: {labelSet("jobs_pending", "namespace", "b")}},
				query:  answer(model.Vector{sample(7, testNow, "namespace", "b")}, nil),
			}
			p := servingProvider(t, prom, rulesFile(t, tenancyRules))
			reads := p.PodAutoscalerReads(tt.tenancy)
			info := provider.ExternalMetricInfo{Metric: tt.metric}
			_, err := reads.GetExternalMetric(t.Context(), tt.namespace, intoB, info)
			checkStatus(t, err, tt.wantCode, "namespaced: false", `namespace "a"`)
			if tt.wantCode == http.StatusForbidden && !errors.Is(err, ErrClusterExternalMetricRefused) {
				t.Errorf("error %v does not wrap ErrClusterExternalMetricRefused", err)
			}
			_, err = reads.LastExternalSample(t.Context(), tt.namespace, intoB, info)
			if got := statusCode(err); tt.wantCode == http.StatusForbidden && got != http.StatusForbidden {
				t.Errorf("LastExternalSample = %v, want a 403", err)
			}
			var want []string
			if tt.wantQuery != "" {
				want = []string{tt.wantQuery, "timestamp"}
			}
			if diff := cmp.Diff(want, firstWords(prom.queries)); diff != "" {
				t.Errorf("queries sent (-want +got):\n%s", diff)
			}

			// The API is not the autoscaler: RBAC on external.metrics.k8s.io governs it.
			prom.queries = nil
			if _, err := p.GetExternalMetric(t.Context(), tt.namespace, intoB, info); err != nil {
				t.Errorf("API request = %v, want it served whatever the tenancy options", err)
			}
		})
	}
}

// firstWords keeps a metric query whole and shortens a last-sample query to "timestamp".
func firstWords(queries []string) []string {
	var out []string
	for _, q := range queries {
		if len(q) > 3 && q[:3] == "sum" {
			out = append(out, q)
			continue
		}
		out = append(out, "timestamp")
	}
	return out
}

func TestTenancyFlags(t *testing.T) {
	o := NewTenancyOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--autoscaler-cluster-external-metrics-namespaces=platform,monitoring"}); err != nil {
		t.Fatal(err)
	}
	if errs := o.Validate(); len(errs) != 1 {
		t.Errorf("Validate() of a namespace list without the restriction = %v, want one error", errs)
	}
	if err := fs.Parse([]string{"--autoscaler-restrict-cluster-external-metrics"}); err != nil {
		t.Fatal(err)
	}
	want := &TenancyOptions{RestrictClusterExternalMetrics: true, ClusterExternalMetricsNamespaces: []string{"platform", "monitoring"}}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if errs := o.Validate(); len(errs) != 0 {
		t.Errorf("Validate() = %v", errs)
	}
}
