package scenario

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBurstSpansSplitOnGapsLongerThanGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	times := []time.Time{at(0), at(1), at(2.5), at(10), at(10.5), at(30)}
	got := burstSpans(times, 5*time.Second)
	if diff := cmp.Diff([]float64{2.5, 0.5, 0}, got); diff != "" {
		t.Errorf("burstSpans (-want +got):\n%s", diff)
	}
	if got := burstSpans(nil, time.Second); len(got) != 0 {
		t.Errorf("burstSpans(nil) = %v, want none", got)
	}
}

func TestFormatWritesListsLargestFirstPerRound(t *testing.T) {
	got := formatWrites(map[string]float64{"events": 2, "podautoscalers/status": 200, "deployments/scale": 2}, 2)
	if want := "podautoscalers/status 100.0, deployments/scale 1.0, events 1.0"; got != want {
		t.Errorf("formatWrites = %q, want %q", got, want)
	}
	if got := formatWrites(nil, 1); got != "none" {
		t.Errorf("formatWrites(nil) = %q, want none", got)
	}
}

func TestRawQueryIsTheDefaultGaugeRuleForEveryPod(t *testing.T) {
	if got, want := rawQuery("ns"), `sum(bench_load{namespace="ns",pod!=""}) by (pod)`; got != want {
		t.Errorf("rawQuery = %q, want %q", got, want)
	}
}
