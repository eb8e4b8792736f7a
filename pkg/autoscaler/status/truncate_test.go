package status

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// selectorError is the message of a metric whose selector has a label value of n bytes, as
// the decision reports it: the value sits in the middle, the cause at the end.
func selectorError(t *testing.T, n int) string {
	t.Helper()
	// As the controller converts a metric's selector (its metricSelector).
	_, err := metav1.LabelSelectorAsSelector((&podpilotv1alpha1.MetricSelector{MatchLabels: map[string]string{"queue": strings.Repeat("a", n)}}).LabelSelector())
	if err == nil {
		t.Fatal("a label value over 63 characters parsed")
	}
	return "the PodAutoscaler was unable to compute the replica count: external metric jobs: metric selector: " + err.Error()
}

func TestTruncateMessage(t *testing.T) {
	tests := []struct {
		name  string
		msg   string
		limit int
		// want are substrings of the result.
		want []string
	}{
		{name: "a message within the bound is unchanged", msg: "no metric jobs", limit: 14, want: []string{"no metric jobs"}},
		{
			name: "a 1 MB label value in a condition is cut to its ends; the words before it and the cause after it stay",
			msg:  selectorError(t, 1<<20), limit: maxConditionMessage,
			want: []string{"the PodAutoscaler was unable to compute the replica count: external metric jobs: metric selector:",
				"Invalid value: \"" + strings.Repeat("a", runEnd/2), " bytes omitted)..." + strings.Repeat("a", runEnd/2),
				"\": must be no more than 63"},
		},
		{
			name: "the same message as an event note fits events/v1's 1 KiB",
			msg:  selectorError(t, 1<<20), limit: maxEventNote,
			want: []string{"unable to compute the replica count", "must be no more than 63"},
		},
		{
			name: "a message of many short words over the bound keeps its head and its tail",
			msg:  "head " + strings.Repeat("word ", 10000) + "tail", limit: 1024,
			want: []string{"head word", " bytes omitted)...", "word tail"},
		},
		{
			name: "a run just at maxRun is kept whole when the message then fits",
			msg:  strings.Repeat("x", maxRun) + " " + strings.Repeat("y", maxRun+1), limit: maxRun + 200,
			want: []string{strings.Repeat("x", maxRun) + " yyy"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TruncateMessage(tc.msg, tc.limit)
			if len(got) > tc.limit || !utf8.ValidString(got) {
				t.Fatalf("got %d bytes (bound %d), valid UTF-8 %t", len(got), tc.limit, utf8.ValidString(got))
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			t.Logf("%d bytes -> %d bytes", len(tc.msg), len(got))
		})
	}
}

// Cuts fall between UTF-8 characters, and the result never passes its bound, for every bound
// and every length of message made of 1-, 2-, 3- and 4-byte characters.
func TestTruncateMessageKeepsUTF8AndTheBound(t *testing.T) {
	for _, unit := range []string{"a", "é", "値", "😀", "a値 😀é"} {
		for _, n := range []int{1, 100, 300, 5000} {
			msg := strings.Repeat(unit, n)
			for _, limit := range []int{40, 64, 200, 1024, maxConditionMessage} {
				got := TruncateMessage(msg, limit)
				if len(got) > limit || !utf8.ValidString(got) {
					t.Errorf("%d x %q, bound %d: %d bytes, valid UTF-8 %t", n, unit, limit, len(got), utf8.ValidString(got))
				}
				if len(msg) <= limit && got != msg {
					t.Errorf("%d x %q, bound %d: a message within the bound changed", n, unit, limit)
				}
			}
		}
	}
}

// The recorder the controller uses cuts notes to 1 KiB, and leaves short ones as formatted.
func TestRecorderTruncatesNotes(t *testing.T) {
	fake := events.NewFakeRecorder(2)
	rec := truncatingRecorder{fake}
	pa := &podpilotv1alpha1.PodAutoscaler{}
	rec.Eventf(pa, nil, "Warning", "FailedGetExternalMetric", actionGetMetrics, "%s", selectorError(t, 1<<20))
	rec.Eventf(pa, nil, "Normal", ReasonSuccessfulRescale, ActionScale, "New size: %d; reason: %s", 3, "above target")
	long, short := <-fake.Events, <-fake.Events
	// FakeRecorder writes "<type> <reason> <note>".
	if note := strings.TrimPrefix(long, "Warning FailedGetExternalMetric "); len(note) > maxEventNote || !strings.Contains(note, "must be no more than 63") {
		t.Errorf("long note: %d bytes, ends %q", len(note), note[max(0, len(note)-60):])
	}
	if want := "Normal SuccessfulRescale New size: 3; reason: above target"; short != want {
		t.Errorf("short note %q, want %q", short, want)
	}
}
