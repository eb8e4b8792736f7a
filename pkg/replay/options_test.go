package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

func TestWindow(t *testing.T) {
	now := clocktesting.NewFakePassiveClock(t0.Add(500 * time.Millisecond))
	tests := []struct {
		name, from, to string
		want           Window
		wantErr        bool
	}{
		{name: "relative --from and now resolve against the clock, to the second", from: "-1h", to: "now",
			want: Window{From: t0.Add(-time.Hour), To: t0, Step: step}},
		{name: "RFC 3339 times are taken as they are", from: "2026-11-23T07:00:00Z", to: "2026-11-23T07:30:00Z",
			want: Window{From: t0.Add(-time.Hour), To: t0.Add(-30 * time.Minute), Step: step}},
		{name: "a window that ends before it starts is refused", from: "now", to: "-1h", wantErr: true},
		{name: "a week at 15 s, more steps than one range query returns, is read in chunks", from: "-168h", to: "now",
			want: Window{From: t0.Add(-168 * time.Hour), To: t0, Step: step}},
		{name: "a window of more than MaxSteps steps is refused", from: "-240h", to: "now", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.From, o.To, o.Step = tt.from, tt.to, step
			got, err := o.window(now)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("window (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodRequestsBeyondInt64MilliUnitsAreRefused(t *testing.T) {
	o := NewOptions()
	o.PodRequests = map[string]string{"memory": "1e16"}
	if _, err := o.requests(); !errors.Is(err, replicas.ErrValueOutOfRange) {
		t.Errorf("--pod-requests memory=1e16: err = %v, want ErrValueOutOfRange, not a request read as 0", err)
	}
}
