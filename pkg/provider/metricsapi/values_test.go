package metricsapi

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQuantity(t *testing.T) {
	tests := []struct {
		name   string
		in     float64
		want   string
		wantOK bool
	}{
		{name: "a rate keeps milli precision", in: 1.5, want: "1500m", wantOK: true},
		{name: "milli precision rounds to nearest", in: 0.0126, want: "13m", wantOK: true},
		{name: "a whole number is exact", in: 2000, want: "2k", wantOK: true},
		{name: "negative values are kept", in: -0.25, want: "-250m", wantOK: true},
		{name: "values beyond int64 milli-units do not overflow", in: 1e20, want: "1e20", wantOK: true},
		{name: "huge negative values do not overflow", in: -math.MaxFloat64 / 2, wantOK: true},
		{name: "NaN is no data", in: math.NaN()},
		{name: "+Inf is no data", in: math.Inf(1)},
		{name: "-Inf is no data", in: math.Inf(-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := quantity(tt.in)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok || tt.want == "" {
				if ok && got.Sign() >= 0 {
					t.Errorf("quantity(%g) = %s, want negative", tt.in, got.String())
				}
				return
			}
			if want := resource.MustParse(tt.want); got.Cmp(want) != 0 {
				t.Errorf("quantity(%g) = %s, want %s", tt.in, got.String(), want.String())
			}
		})
	}
}
