package controller

import (
	"math"
	"testing"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

func TestCurrentRendersMemoryInWholeBytesWithoutOverflow(t *testing.T) {
	memory := replicas.Target{Resource: "memory"}
	tests := []struct {
		name  string
		milli int64
		t     replicas.Target
		want  string
	}{
		{name: "memory is rounded to the nearest byte", milli: 1536_499, t: memory, want: "1536"},
		{name: "half a byte rounds up", milli: 1536_500, t: memory, want: "1537"},
		{name: "memory at the largest int64 milli-units stays positive, not wrapped", milli: math.MaxInt64, t: memory, want: "9223372036854776"},
		{name: "everything else keeps its milli-units", milli: 1500, want: "1500m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := current(tc.milli, tc.t).String(); got != tc.want {
				t.Errorf("current(%d) = %s, want %s", tc.milli, got, tc.want)
			}
		})
	}
}
