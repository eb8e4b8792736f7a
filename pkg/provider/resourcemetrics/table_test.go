package resourcemetrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/metrics/pkg/apis/metrics"
)

func TestConvertToTable(t *testing.T) {
	ts := testNow
	pods := &metrics.PodMetricsList{Items: []metrics.PodMetrics{
		podMetrics("ns", "p1", ts, container("app", "250m", "64Mi"), container("sidecar", "2m", "1Mi")),
		podMetrics("ns", "p2", ts, container("app", "100m", "")),
	}}
	cases := []struct {
		name string
		obj  runtime.Object
		want [][]any
	}{
		{
			name: "a pod row sums its containers and a resource without samples is unknown",
			obj:  pods,
			want: [][]any{{"p1", "252m", "65Mi", "3m0s"}, {"p2", "100m", "<unknown>", "3m0s"}},
		},
		{
			name: "a node row shows its usage",
			obj:  ptr(nodeMetrics("n1", ts, "3500m", "8Gi")),
			want: [][]any{{"n1", "3500m", "8Gi", "3m0s"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table, err := tableConvertor{}.ConvertToTable(t.Context(), tc.obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]any
			for _, row := range table.Rows {
				got = append(got, row.Cells)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}
