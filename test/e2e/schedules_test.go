package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestScheduleWindowRaisesTheFloorThenMetricsGovern: a schedule window that started this minute
// (UTC) and ends about 90 s from now raises a Deployment whose metric asks for 1 replica to the
// window's floor of 3, with ScheduleActive True, status.schedules and a ScheduleWindowStarted
// event. When the window ends the metric governs again: the replicas come back to 1 no sooner
// than the window's end, with ScheduleWindowEnded.
func TestScheduleWindowRaisesTheFloorThenMetricsGovern(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-schedule")
	const name = "vg1-vanguard"
	startWorkload(ctx, t, ns, name, 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, name, "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(1500) // ceil(1500/2000) = 1

	start := time.Now().UTC().Truncate(time.Minute)
	end := time.Now().Add(90 * time.Second).Truncate(time.Second)
	window := fmt.Sprintf("  schedules:\n  - {name: launch, start: \"%d %d * * *\", duration: %s, minReplicas: 3}\n",
		start.Minute(), start.Hour(), end.Sub(start))
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("ppa", "deployment", name, 1, 5, "zdns_vanguard_qps", "2000", window))

	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, name, 3)
	waitPodAutoscalerCondition(ctx, t, ns, "ppa", "ScheduleActive", metav1.ConditionTrue)
	pa, err := getPodAutoscaler(ctx, t, ns, "ppa")
	if err != nil {
		t.Fatal(err)
	}
	if s := pa.Status.Schedules; s == nil || s.Floor != 3 || len(s.Active) != 1 || s.Active[0].Name != "launch" {
		t.Errorf("status.schedules = %+v, want floor 3 from window launch", s)
	}
	if n := countEvents(ctx, t, ns, "PodAutoscaler", "ppa", "ScheduleWindowStarted"); n != 1 {
		t.Errorf("%d ScheduleWindowStarted events, want 1", n)
	}

	cluster.WaitReplicas(ctx, t, time.Until(end)+time.Minute, "Deployment", ns, name, 1)
	if dropped := time.Now(); dropped.Before(end) {
		t.Errorf("replicas back to 1 at %s, before the window's end %s", dropped.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	t.Logf("back to 1 replica %s after the window's end", time.Since(end).Round(time.Second))
	waitPodAutoscalerCondition(ctx, t, ns, "ppa", "ScheduleActive", metav1.ConditionFalse)
	if n := countEvents(ctx, t, ns, "PodAutoscaler", "ppa", "ScheduleWindowEnded"); n != 1 {
		t.Errorf("%d ScheduleWindowEnded events, want 1", n)
	}
}
