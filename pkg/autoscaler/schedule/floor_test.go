package schedule

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
)

var now = autoscalertest.Now

// seedAutoscaler is the seed 000 example; mutate adapts it per case.
var seedAutoscaler = autoscalertest.Seed

// window is a schedule window starting every day at 21:00 UTC (the fixture's now) for an hour.
func window(name string, floor int32) podpilotv1alpha1.ScheduleWindow {
	return podpilotv1alpha1.ScheduleWindow{Name: name, Start: "0 21 * * *", Duration: metav1.Duration{Duration: time.Hour}, MinReplicas: floor}
}

// withSchedules sets the seed autoscaler's schedule windows.
func withSchedules(ws ...podpilotv1alpha1.ScheduleWindow) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.Schedules = ws }
}

func TestTheNextRoundComesWhenAWindowStartsOrEndsIfThatIsSooner(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }
	tests := []struct {
		name   string
		status *podpilotv1alpha1.ScheduleStatus
		want   time.Duration
	}{
		{name: "no schedule status: no time", want: 0},
		{name: "the next start", status: &podpilotv1alpha1.ScheduleStatus{Next: &podpilotv1alpha1.WindowOccurrence{Start: at(7 * time.Second)}}, want: 7 * time.Second},
		{name: "an active window's end before the next start", status: &podpilotv1alpha1.ScheduleStatus{
			Active: []podpilotv1alpha1.WindowOccurrence{{End: at(3 * time.Second)}}, Next: &podpilotv1alpha1.WindowOccurrence{Start: at(time.Hour)}}, want: 3 * time.Second},
		{name: "times already past are no time", status: &podpilotv1alpha1.ScheduleStatus{Next: &podpilotv1alpha1.WindowOccurrence{Start: at(-time.Second)}}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa := seedAutoscaler(withSchedules(window("business", 4)))
			pa.Status.Schedules = tt.status
			if got := UntilWindowChange(pa, now); got != tt.want {
				t.Errorf("until = %s, want %s", got, tt.want)
			}
		})
	}
}
