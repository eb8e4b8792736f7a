package state

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// Merge folds the history checkpointed in stored (pa as read from the API server after a
// conflict) into what is known of pa, and returns the merged history (see normalize.Merge).
func Merge[C any](s Store[C], stored *podpilotv1alpha1.PodAutoscaler, lastRound time.Time) normalize.History {
	merged := HistoryOf(stored.Status, lastRound)
	s.Remember(ObjectRef(stored), func(e *Remembered[C]) {
		e.History = normalize.Merge(e.History, merged, specconv.Behavior(stored.Spec.Behavior))
		merged = e.History
	})
	return merged
}

// HistoryOf reads the history checkpointed in status; the newest run counts as made until
// lastRound (see normalize.FromCheckpoint).
func HistoryOf(s podpilotv1alpha1.PodAutoscalerStatus, lastRound time.Time) normalize.History {
	var h normalize.History
	var recs []normalize.Recommendation
	for _, r := range s.Recommendations {
		recs = append(recs, normalize.Recommendation{Replicas: r.Replicas, Time: r.Timestamp.Time})
	}
	h.Recommendations = normalize.FromCheckpoint(recs, lastRound)
	if len(h.Recommendations) == 0 {
		h.Recommendations = nil
	}
	if s.ScaleEvents != nil {
		h.ScaleUpEvents = eventsOf(s.ScaleEvents.ScaleUp)
		h.ScaleDownEvents = eventsOf(s.ScaleEvents.ScaleDown)
	}
	return h
}

func eventsOf(in []podpilotv1alpha1.ScaleEvent) []normalize.ScaleEvent {
	var out []normalize.ScaleEvent
	for _, e := range in {
		out = append(out, normalize.ScaleEvent{Change: e.ReplicaChange, Time: e.Timestamp.Time})
	}
	return out
}

// PersistHistory writes h into status as its checkpoint (see normalize.Checkpoint), within the
// CRD's bounds. Status keeps whole seconds, so every time a window or a period counts from (an
// ended run, a scale event) is rounded up: read back, it holds a little longer, never shorter;
// the newest run's start is rounded down. Past MaxRecommendations the oldest runs are folded
// (normalize.Fold), never dropped. Scale events stay within MaxScaleEvents since a PodAutoscaler
// rescales at most once per round, and the controller's options keep a period's rounds within it.
// The forecast's floors (normalize.History.ForecastFloors) are not checkpointed: a new leader
// starts without them, and its floor follows the forecast until it has its own.
func PersistHistory(s *podpilotv1alpha1.PodAutoscalerStatus, h normalize.History) {
	runs := normalize.Fold(normalize.Checkpoint(h.Recommendations), podpilotv1alpha1.MaxRecommendations)
	recs := make([]podpilotv1alpha1.Recommendation, 0, len(runs))
	for i, r := range runs {
		t := normalize.CeilSecond(r.Time)
		if i == len(runs)-1 {
			t = r.Time.Truncate(time.Second)
		}
		recs = append(recs, podpilotv1alpha1.Recommendation{Replicas: r.Replicas, Timestamp: metav1.NewTime(t)})
	}
	s.Recommendations = recs
	if len(s.Recommendations) == 0 {
		s.Recommendations = nil
	}
	up := scaleEventsOf(newestEvents(h.ScaleUpEvents, podpilotv1alpha1.MaxScaleEvents))
	down := scaleEventsOf(newestEvents(h.ScaleDownEvents, podpilotv1alpha1.MaxScaleEvents))
	s.ScaleEvents = nil
	if len(up) > 0 || len(down) > 0 {
		s.ScaleEvents = &podpilotv1alpha1.ScaleEvents{ScaleUp: up, ScaleDown: down}
	}
}

func scaleEventsOf(in []normalize.ScaleEvent) []podpilotv1alpha1.ScaleEvent {
	var out []podpilotv1alpha1.ScaleEvent
	for _, e := range in {
		out = append(out, podpilotv1alpha1.ScaleEvent{ReplicaChange: e.Change, Timestamp: metav1.NewTime(normalize.CeilSecond(e.Time))})
	}
	return out
}

// newestEvents returns the n newest of events, in their order.
func newestEvents(events []normalize.ScaleEvent, n int) []normalize.ScaleEvent {
	if len(events) <= n {
		return events
	}
	times := make([]time.Time, 0, len(events))
	for _, e := range events {
		times = append(times, e.Time)
	}
	slices.SortFunc(times, time.Time.Compare)
	cutoff := times[len(times)-n]
	out := make([]normalize.ScaleEvent, 0, n)
	for _, e := range events {
		if !e.Time.Before(cutoff) && len(out) < n {
			out = append(out, e)
		}
	}
	return out
}
