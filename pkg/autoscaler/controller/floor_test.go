package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// window is a schedule window starting every day at 21:00 UTC (the fixture's now) for an hour.
func window(name string, floor int32) podpilotv1alpha1.ScheduleWindow {
	return podpilotv1alpha1.ScheduleWindow{Name: name, Start: "0 21 * * *", Duration: metav1.Duration{Duration: time.Hour}, MinReplicas: floor}
}

// withSchedules sets the seed autoscaler's schedule windows.
func withSchedules(ws ...podpilotv1alpha1.ScheduleWindow) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.Schedules = ws }
}

// qpsVar serves *qps per pod for the named pods, read at each request.
func qpsVar(qps *string, pods ...string) customFunc {
	return func(ctx context.Context, namespace string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		return qpsPerPod(*qps, pods...)(ctx, namespace, sel, info, msel)
	}
}

// syncAt moves the clock to at and runs a round, failing the test on an error.
func (f *fixture) syncAt(at time.Time) {
	f.t.Helper()
	f.clock.SetTime(at)
	if err := f.sync(); err != nil {
		f.t.Fatal(err)
	}
}

func TestAnActiveWindowRaisesTheReplicasToItsFloorAtOnce(t *testing.T) {
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("business", 4))))...)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := f.replicas("deployment"); got != 4 {
		t.Errorf("replicas = %d, want the floor 4", got)
	}
	want := &podpilotv1alpha1.ScheduleStatus{Floor: 4,
		Active: []podpilotv1alpha1.WindowOccurrence{{Name: "business", Start: metav1.NewTime(now), End: metav1.NewTime(now.Add(time.Hour)), MinReplicas: 4}},
		Next:   &podpilotv1alpha1.WindowOccurrence{Name: "business", Start: metav1.NewTime(now.Add(24 * time.Hour)), End: metav1.NewTime(now.Add(25 * time.Hour)), MinReplicas: 4}}
	if diff := cmp.Diff(want, pa.Status.Schedules); diff != "" {
		t.Errorf("status.schedules (-want +got):\n%s", diff)
	}
	if got := condition(pa, podpilotv1alpha1.ConditionScheduleActive); got != "True WindowActive" {
		t.Errorf("ScheduleActive = %s", got)
	}
	reasons, lines := f.events()
	if diff := cmp.Diff([]string{"Normal ScheduleWindowStarted", "Normal SuccessfulRescale"}, reasons); diff != "" {
		t.Errorf("events (-want +got):\n%s\n%q", diff, lines)
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "below the floor of schedule window business") }) {
		t.Errorf("the rescale does not name the window: %q", lines)
	}
}

func TestAfterAWindowEndsTheMetricsGovernThroughTheirStabilization(t *testing.T) {
	qps := "3000" // 2 replicas' worth on the one pod
	f := newFixture(t, qpsVar(&qps, podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("business", 4))))...)
	f.syncAt(now)
	f.syncAt(now.Add(59*time.Minute + 45*time.Second))
	if got := f.replicas("deployment"); got != 4 {
		t.Fatalf("replicas in the window = %d, want the floor 4", got)
	}
	f.events()
	qps = "1000" // 1 replica's worth
	f.syncAt(now.Add(time.Hour + 15*time.Second))
	if got := f.replicas("deployment"); got != 2 {
		t.Errorf("replicas just after the window = %d, want 2: the metric's recommendation of 2 within the stabilization window", got)
	}
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionScheduleActive); got != "False NoActiveWindow" {
		t.Errorf("ScheduleActive = %s", got)
	}
	if pa.Status.Schedules == nil || pa.Status.Schedules.Floor != 0 || len(pa.Status.Schedules.Active) != 0 {
		t.Errorf("status.schedules = %+v, want no floor and no active window", pa.Status.Schedules)
	}
	if reasons, _ := f.events(); !slices.Contains(reasons, "Normal ScheduleWindowEnded") {
		t.Errorf("events = %q, want ScheduleWindowEnded", reasons)
	}
	f.syncAt(now.Add(time.Hour + 6*time.Minute))
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas after the stabilization window = %d, want the metric's 1", got)
	}
}

func TestTheHighestActiveFloorHoldsAndNamesItsWindow(t *testing.T) {
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("low", 2), window("high", 3))))...)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := f.replicas("deployment"); got != 3 {
		t.Errorf("replicas = %d, want the highest floor 3", got)
	}
	var names []string
	for _, o := range pa.Status.Schedules.Active {
		names = append(names, o.Name)
	}
	if diff := cmp.Diff([]string{"high", "low"}, names); diff != "" {
		t.Errorf("active windows, highest floor first (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive); c == nil || !strings.Contains(c.Message, "schedule window high") {
		t.Errorf("ScheduleActive = %+v, want it to name window high", c)
	}
}

func TestAFloorAboveMaxReplicasIsCappedAtMaxReplicas(t *testing.T) {
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("big", 50))))...)
	f.syncAt(now)
	if got := f.replicas("deployment"); got != 5 {
		t.Errorf("replicas = %d, want maxReplicas 5", got)
	}
}

func TestAnUnreadableScheduleSetsNoFloorSaysWhyAndWarnsOnce(t *testing.T) {
	bad := window("business", 4)
	bad.TimeZone = "Mars/Olympus_Mons" // the pattern admits it; no such zone exists
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(bad)))...)
	f.syncAt(now)
	f.syncAt(now.Add(15 * time.Second))
	pa := f.autoscaler()
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas = %d, want 1: no floor holds", got)
	}
	if got := condition(pa, podpilotv1alpha1.ConditionScheduleActive); got != "False InvalidSchedule" {
		t.Errorf("ScheduleActive = %s", got)
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive); c == nil || !strings.Contains(c.Message, "Mars/Olympus_Mons") {
		t.Errorf("ScheduleActive = %+v, want it to name the time zone", c)
	}
	reasons, _ := f.events()
	if diff := cmp.Diff([]string{"Warning InvalidSchedule"}, reasons); diff != "" {
		t.Errorf("events over two rounds (-want +got):\n%s", diff)
	}
}

func TestANewLeaderMakesNoStartEventForAWindowItFindsGoingOn(t *testing.T) {
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("business", 4))))...)
	f.syncAt(now)
	f.events()
	f.restart() // a new leader: its memory is seeded from the status the first wrote
	f.syncAt(now.Add(15 * time.Second))
	if reasons, _ := f.events(); slices.Contains(reasons, "Normal ScheduleWindowStarted") {
		t.Errorf("events = %q, want no second ScheduleWindowStarted", reasons)
	}
	f.syncAt(now.Add(time.Hour))
	if reasons, _ := f.events(); !slices.Contains(reasons, "Normal ScheduleWindowEnded") {
		t.Errorf("events = %q, want ScheduleWindowEnded from the new leader", reasons)
	}
}

func TestRemovingTheSchedulesClearsTheirStatusAndCondition(t *testing.T) {
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), withSchedules(window("business", 4))))...)
	f.syncAt(now)
	pa := f.autoscaler()
	pa.Spec.Schedules, pa.Generation = nil, pa.Generation+1
	if _, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Update(t.Context(), pa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.syncAt(now.Add(15 * time.Second))
	pa = f.autoscaler()
	if pa.Status.Schedules != nil || meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive) != nil {
		t.Errorf("status.schedules = %+v, ScheduleActive = %+v; want neither", pa.Status.Schedules, meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive))
	}
}
