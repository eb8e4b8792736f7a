package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

func TestPersistedHistoryKeepsWholeSecondsThatNeverShortenAWindow(t *testing.T) {
	at := func(ms int) time.Time { return now.Add(time.Duration(ms) * time.Millisecond) }
	h := normalize.History{
		// Two ended runs, last made at 15.2 s and 30 s, and the newest run, started at 45.7 s and
		// last made at 60.7 s.
		Recommendations: []normalize.Recommendation{{Replicas: 3, Time: at(15200)}, {Replicas: 5, Time: at(30000)},
			{Replicas: 3, Time: at(60700), Since: at(45700)}},
		ScaleDownEvents: []normalize.ScaleEvent{{Change: 1, Time: at(30000)}, {Change: 2, Time: at(44300)}},
	}
	var s podpilotv1alpha1.PodAutoscalerStatus
	PersistHistory(&s, h)
	wantRecs := []podpilotv1alpha1.Recommendation{
		{Replicas: 3, Timestamp: metav1.NewTime(at(16000))}, {Replicas: 5, Timestamp: metav1.NewTime(at(30000))}, {Replicas: 3, Timestamp: metav1.NewTime(at(45000))},
	}
	if diff := cmp.Diff(wantRecs, s.Recommendations); diff != "" {
		t.Errorf("recommendations (-want +got):\n%s", diff)
	}
	wantEvents := []podpilotv1alpha1.ScaleEvent{{ReplicaChange: 1, Timestamp: metav1.NewTime(at(30000))}, {ReplicaChange: 2, Timestamp: metav1.NewTime(at(45000))}}
	if diff := cmp.Diff(wantEvents, s.ScaleEvents.ScaleDown); diff != "" {
		t.Errorf("scale events, rounded up to the second (-want +got):\n%s", diff)
	}
	back := HistoryOf(s, at(75000))
	if got := back.Recommendations[len(back.Recommendations)-1]; !got.Time.Equal(at(75000)) || !got.Since.Equal(at(45000)) {
		t.Errorf("newest run read back = %+v, want made until the last round (75 s) since 45 s", got)
	}
	again := s.DeepCopy()
	PersistHistory(again, back)
	if diff := cmp.Diff(s.Recommendations, again.Recommendations); diff != "" {
		t.Errorf("a persisted history read back and persisted again changed (-first +second):\n%s", diff)
	}

	long := normalize.History{}
	for i := range podpilotv1alpha1.MaxRecommendations + 10 {
		long.Recommendations = append(long.Recommendations, normalize.Recommendation{Replicas: int32(i%7 + 1), Time: at(i * 1000)})
	}
	PersistHistory(&s, long)
	if got := len(s.Recommendations); got != podpilotv1alpha1.MaxRecommendations {
		t.Fatalf("recommendations = %d, want the bound %d", got, podpilotv1alpha1.MaxRecommendations)
	}
	if got, want := s.Recommendations[len(s.Recommendations)-1].Timestamp.Time, at((podpilotv1alpha1.MaxRecommendations+9)*1000); !got.Equal(want) {
		t.Errorf("newest kept = %s, want %s", got, want)
	}
	if first, second := s.Recommendations[0], s.Recommendations[1]; first.Replicas != 7 || second.Replicas != 1 || !first.Timestamp.Equal(&second.Timestamp) {
		t.Errorf("oldest runs folded into %+v and %+v, want their highest (7) and lowest (1), dated alike", first, second)
	}
}
