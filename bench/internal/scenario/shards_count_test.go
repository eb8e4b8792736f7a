package scenario

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBucketsAreEvenWhenEveryOneIsHeldByAReplicaAndCountsDifferByAtMostOne(t *testing.T) {
	ids := []string{"a", "b", "c"}
	tests := []struct {
		name    string
		holders []string
		ids     []string
		even    bool
		spread  string
	}{
		{name: "six buckets 2/2/2 over three replicas are even", holders: []string{"a", "b", "c", "a", "b", "c"}, ids: ids, even: true, spread: "2/2/2"},
		{name: "3/2/1 is not even", holders: []string{"a", "a", "a", "b", "b", "c"}, ids: ids, spread: "3/2/1"},
		{name: "an unheld bucket is not even", holders: []string{"a", "b", "", "a", "b", "c"}, ids: ids, spread: "2/2/1 +1 unheld"},
		{name: "a bucket of a replica not among ids (the killed one) is not even", holders: []string{"a", "b", "c", "a", "b", "c"}, ids: ids[:2], spread: "2/2 +2 unheld"},
		{name: "3/3 over the two survivors is even", holders: []string{"a", "b", "b", "a", "b", "a"}, ids: ids[:2], even: true, spread: "3/3"},
		{name: "counts differing by one are even (7 buckets 3/2/2)", holders: []string{"a", "b", "c", "a", "b", "c", "a"}, ids: ids, even: true, spread: "3/2/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evenOver(tt.holders, tt.ids); got != tt.even {
				t.Errorf("evenOver = %v, want %v", got, tt.even)
			}
			if got := spreadString(tt.holders, tt.ids); got != tt.spread {
				t.Errorf("spreadString = %q, want %q", got, tt.spread)
			}
		})
	}
}

func TestADoubleScaleIsAPodAutoscalerRescaledByTwoProcesses(t *testing.T) {
	logA := `I1129 15:30:01.000001   123 sync.go:233] "Rescaled" podAutoscaler="bench-n00/w-00000" target="Deployment/w-00000" from=2 to=6
I1129 15:30:01.000002   123 sync.go:233] "Rescaled" podAutoscaler="bench-n01/w-00001" target="Deployment/w-00001" from=2 to=6
I1129 15:30:16.000002   123 sync.go:233] "Rescaled" podAutoscaler="bench-n01/w-00001" target="Deployment/w-00001" from=6 to=7
I1129 15:30:02.000000   123 round.go:10] "Round done" podAutoscalers=60
`
	logB := `I1129 15:30:03.000001   456 sync.go:233] "Rescaled" podAutoscaler="bench-n02/w-00002" target="Deployment/w-00002" from=2 to=6
I1129 15:30:04.000001   456 sync.go:233] "Rescaled" podAutoscaler="bench-n00/w-00000" target="Deployment/w-00000" from=6 to=7
I1129 15:30:05.000001   456 other.go:1] "Not rescaled" podAutoscaler="bench-n03/w-00003"
`
	a, b := rescaledIn(logA), rescaledIn(logB)
	if diff := cmp.Diff(map[string]int{"bench-n00/w-00000": 1, "bench-n01/w-00001": 2}, a); diff != "" {
		t.Errorf("rescaledIn(A) (-want +got):\n%s", diff)
	}
	got := countRescalers([]map[string]int{a, b})
	want := rescalerCount{rescaled: 3, lines: 5, byTwoOrMore: []string{"bench-n00/w-00000"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(rescalerCount{})); diff != "" {
		t.Errorf("countRescalers (-want +got):\n%s", diff)
	}
	if got := countRescalers([]map[string]int{a}); len(got.byTwoOrMore) != 0 {
		t.Errorf("one process rescaling a PodAutoscaler twice is no double scale: %v", got.byTwoOrMore)
	}
}

func TestABucketMovedWhenItsHolderChangedBetweenTheStepAndTheResize(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	timeline := []holderSample{
		{at: at(0), holders: []string{"a", "b"}},
		{at: at(10), holders: []string{"", "b"}},
		{at: at(20), holders: []string{"c", "b"}},
		{at: at(30), holders: []string{"c", "d"}},
	}
	tests := []struct {
		name     string
		bucket   int
		from, to time.Time
		want     bool
	}{
		{name: "a bucket released (unheld) before the resize moved", bucket: 0, from: at(1), to: at(15), want: true},
		{name: "a bucket whose holder changes only after the resize did not move for it", bucket: 1, from: at(1), to: at(25), want: false},
		{name: "a bucket whose holder changed before the resize moved", bucket: 1, from: at(1), to: at(35), want: true},
		{name: "the holder at the step is the last sample at or before it", bucket: 0, from: at(20), to: at(35), want: false},
		{name: "a window before the first sample compares with the first", bucket: 0, from: t0.Add(-time.Second), to: at(5), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := movedWithin(timeline, tt.bucket, tt.from, tt.to); got != tt.want {
				t.Errorf("movedWithin = %v, want %v", got, tt.want)
			}
		})
	}
	if movedWithin(nil, 0, t0, at(1)) {
		t.Error("an empty timeline moved")
	}
}

func TestScaleHistoryCountsDeploymentsByTheirChangesInAStep(t *testing.T) {
	h := changeHistogram([]int{1, 1, 2, 1, 0})
	if got, want := formatChangeHistogram(h), "0: 1, 1: 3, 2: 1"; got != want {
		t.Errorf("formatChangeHistogram = %q, want %q", got, want)
	}
	if got := formatChangeHistogram(nil); got != "none" {
		t.Errorf("formatChangeHistogram(nil) = %q, want none", got)
	}
}

func TestShardLevelsStepTwiceMoreByAQuarterAboveStepTo(t *testing.T) {
	if got, want := shardLevels(300), [3]int{300, 375, 469}; got != want {
		t.Errorf("shardLevels(300) = %v, want %v", got, want)
	}
	if got, want := ShardPods(300, 2), 10; got != want {
		t.Errorf("ShardPods(300, 2) = %d, want %d", got, want)
	}
	if got, want := ShardPods(150, 100), 235; got != want {
		t.Errorf("ShardPods(150, 100) = %d, want %d", got, want)
	}
}
