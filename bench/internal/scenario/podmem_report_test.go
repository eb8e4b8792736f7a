package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodTableGrowthIsFromTheLevelWithoutPods(t *testing.T) {
	levels := []podLevel{
		{pods: 0, podpilot: rssSample{median: 100, max: 101}, baseline: rssSample{median: 20, max: 21}},
		{pods: 1000, podpilot: rssSample{median: 101, max: 102}, baseline: rssSample{median: 30, max: 31}, protoPerPod: 900.4, jsonPerPod: 2100},
	}
	got := podTable(levels, false)
	want := [][]string{
		{"0", "100.0 / 101.0", "0.0", "20.0 / 21.0", "0.0", "–", "–", "–"},
		{"1000", "101.0 / 102.0", "1.0 (1049 B/pod)", "30.0 / 31.0", "10.0 (10486 B/pod)", "0.10×", "900", "2100"},
	}
	if diff := cmp.Diff(want, got.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if len(got.Header) != len(want[0]) {
		t.Errorf("header has %d columns, rows %d", len(got.Header), len(want[0]))
	}
}

func TestPodTableAddsTheAdapterColumnsWhenGiven(t *testing.T) {
	levels := []podLevel{
		{pods: 0, adapter: rssSample{median: 50, max: 50}},
		{pods: 2000, adapter: rssSample{median: 52, max: 53}},
	}
	got := podTable(levels, true)
	if len(got.Header) != 10 || got.Rows[1][6] != "52.0 / 53.0" || got.Rows[1][7] != "2.0 (1049 B/pod)" {
		t.Errorf("adapter columns: header %q, row %q", got.Header, got.Rows[1])
	}
}

func TestPodHeadlineScalesTheLargestLevelTo10kPods(t *testing.T) {
	levels := []podLevel{
		{pods: 0, podpilot: rssSample{median: 100}, baseline: rssSample{median: 20}},
		{pods: 5000, podpilot: rssSample{median: 105}, baseline: rssSample{median: 70}, protoPerPod: 1000, jsonPerPod: 2500},
	}
	got := podHeadline(levels, false)
	want := "g. podpilot RSS grew 10.0 MiB per 10k pods (100 → 105 MiB at 5000 pods) = 0.10× the unstripped typed informer's 100.0 MiB per 10k"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "a pod is 1000 B in protobuf, 2500 B in JSON") {
		t.Errorf("headline = %q, want it to start with %q", got, want)
	}
}

func TestPodNotesJudgeTheTargetAtAQuarterOfTheTypedInformer(t *testing.T) {
	tests := []struct {
		name            string
		podpilot, typed float64
		want            string
	}{
		{name: "a quarter meets the target", podpilot: 25, typed: 100, want: "meets"},
		{name: "more than a quarter misses it", podpilot: 26, typed: 100, want: "misses"},
		{name: "a baseline that did not grow cannot be met", podpilot: 0, typed: 0, want: "misses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			levels := []podLevel{{pods: 0}, {pods: 10000, podpilot: rssSample{median: tt.podpilot}, baseline: rssSample{median: tt.typed}}}
			got := podNotes(levels, false)
			if len(got) != 1 || !strings.Contains(got[0], ": "+tt.want+" at 10000 pods") {
				t.Errorf("notes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPodReportNeedsTwoLevels(t *testing.T) {
	one := []podLevel{{pods: 0}}
	if h, n := podHeadline(one, true), podNotes(one, true); h != nil || n != nil {
		t.Errorf("one level gave headline %q, notes %q", h, n)
	}
}
