package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTheDemoNamesEveryAPIItStillLacks(t *testing.T) {
	tests := []struct {
		name string
		last map[string]string
		want []string
	}{
		{
			name: "all answered 200: nothing missing, the whole example runs",
			last: map[string]string{demoAPIPaths[0]: "200", demoAPIPaths[1]: "200", demoAPIPaths[2]: "200"},
		},
		{
			name: "metrics.k8s.io answering 403 is named with its answer (issue 10: it was silently left out)",
			last: map[string]string{demoAPIPaths[0]: "200", demoAPIPaths[1]: "200", demoAPIPaths[2]: "403"},
			want: []string{`GET /apis/metrics.k8s.io/v1beta1 answered "403"`},
		},
		{
			name: "an API never asked is missing too",
			last: map[string]string{demoAPIPaths[1]: "200", demoAPIPaths[2]: "200"},
			want: []string{`GET /apis/custom.metrics.k8s.io/v1beta2 answered ""`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, missingAPIs(tt.last)); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}
