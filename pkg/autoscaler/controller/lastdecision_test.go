package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// TestEveryRoundExplainsItsDecision checks that status.lastDecision explains the rounds that
// hold the replicas as well as those that change them (why didn't it scale?), and that a hold
// explained as the last round was is not written again: a steady hold costs no status write.
func TestEveryRoundExplainsItsDecision(t *testing.T) {
	qps := "2000"
	f := newFixture(t, settableQPS(&qps, podNames(4)...), nil, append(seedPods(4), seedDeployment(4), seedAutoscaler(checkpointed(4)))...)
	metric := func(replicas int32) []podpilotv1alpha1.DecisionProposal {
		return []podpilotv1alpha1.DecisionProposal{{Source: "Metric", Name: "pods metric zdns_vanguard_qps", Replicas: replicas}}
	}
	rounds := []struct {
		name string
		qps  string
		want podpilotv1alpha1.LastDecision
		// since is the round whose time the explanation keeps (an index into rounds).
		since int
		write bool
	}{
		{
			name: "4 pods at 2050 against 2000 are within tolerance: held, and said so",
			qps:  "2050", since: 0, write: true,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 4, Winner: "held: within tolerance", Proposals: metric(4)},
		},
		{
			name: "the same hold again is the same explanation: no status write, the first round's time kept",
			qps:  "2000", since: 0, write: false,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 4, Winner: "held: within tolerance", Proposals: metric(4)},
		},
		{
			name: "the load halves: the metric asks for 2, the downscale stabilization window keeps 4",
			qps:  "1000", since: 2, write: true,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 4, Winner: "held: stabilization window keeps 4",
				Proposals: metric(2), Changes: []string{"ScaleDownStabilized: 2 to 4"}},
		},
		{
			name: "the same stabilized hold again writes nothing",
			qps:  "1000", since: 2, write: false,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 4, Winner: "held: stabilization window keeps 4",
				Proposals: metric(2), Changes: []string{"ScaleDownStabilized: 2 to 4"}},
		},
		{
			name: "a failing metric holds, naming the ScalingActive reason",
			qps:  "", since: 4, write: true,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 4, Winner: "held: FailedGetPodsMetric (see condition ScalingActive)"},
		},
		{
			name: "a rescale is explained as before",
			qps:  "3000", since: 5, write: true,
			want: podpilotv1alpha1.LastDecision{FromReplicas: 4, ToReplicas: 5, Winner: "pods metric zdns_vanguard_qps",
				Proposals: metric(6), Changes: []string{"TooManyReplicas: 6 to 5"}},
		},
	}
	times := make([]metav1.Time, len(rounds))
	for i, r := range rounds {
		times[i] = metav1.NewTime(f.clock.Now())
		before := f.statusWrites()
		qps = r.qps
		if err := f.sync(); err != nil {
			t.Fatalf("%s: sync: %v", r.name, err)
		}
		if got := f.statusWrites() - before; got != map[bool]int{true: 1, false: 0}[r.write] {
			t.Errorf("%s: %d status writes, want write=%t", r.name, got, r.write)
		}
		got := f.autoscaler().Status.LastDecision
		if got == nil {
			t.Fatalf("%s: no status.lastDecision", r.name)
		}
		if diff := cmp.Diff(r.want, *got, cmpopts.IgnoreFields(podpilotv1alpha1.LastDecision{}, "Time")); diff != "" {
			t.Errorf("%s: status.lastDecision (-want +got):\n%s", r.name, diff)
		}
		if !got.Time.Time.Equal(times[r.since].Time) {
			t.Errorf("%s: lastDecision.time = %s, want %s (round %d)", r.name, got.Time.Time, times[r.since].Time, r.since)
		}
		f.clock.Step(DefaultSyncPeriod)
	}
}

// TestHeldRoundsSayWhyTheyHeld checks the words of each kind of hold: they name what kept the
// replicas and the count, never a value that moves every round, so a steady hold is one
// explanation.
func TestHeldRoundsSayWhyTheyHeld(t *testing.T) {
	metric := []decision.Proposal{{Source: decision.MetricProposal, Name: "pods metric q", Replicas: 2}}
	held := func(proposed int32, changes ...string) decision.Decision {
		return decision.Decision{DesiredReplicas: 4, Explanation: decision.Explanation{Winner: "pods metric q", WinnerSource: decision.MetricProposal,
			Proposals: metric, Proposed: proposed, Desired: 4, Changes: changes}}
	}
	tests := []struct {
		name string
		d    decision.Decision
		want string
	}{
		{name: "the proposals ask for the current replicas: within tolerance", d: held(4), want: "held: within tolerance"},
		{name: "a downscale stabilization window", d: held(2, "ScaleDownStabilized: 2 to 4"), want: "held: stabilization window keeps 4"},
		{name: "an upscale stabilization window", d: held(6, "ScaleUpStabilized: 6 to 4"), want: "held: stabilization window keeps 4"},
		{name: "minReplicas", d: held(2, "TooFewReplicas: 2 to 4"), want: "held: minReplicas keeps 4"},
		{name: "maxReplicas", d: held(6, "TooManyReplicas: 6 to 4"), want: "held: maxReplicas keeps 4"},
		{name: "scaling policies (e.g. selectPolicy Disabled)", d: held(6, "ScaleUpLimit: 6 to 4"), want: "held: scaling policies keep 4"},
		{name: "the last change is what kept them", d: held(2, "ScaleDownStabilized: 2 to 3", "TooFewReplicas: 3 to 4"), want: "held: minReplicas keeps 4"},
		{
			name: "a schedule window's floor",
			d: decision.Decision{DesiredReplicas: 4, Explanation: decision.Explanation{Winner: "schedule window rush", WinnerSource: decision.ScheduleProposal,
				Proposals: metric, Proposed: 2, Desired: 4}},
			want: "held: schedule window rush keeps 4",
		},
		{
			name: "metrics that could not be used name the ScalingActive reason",
			d: decision.Decision{DesiredReplicas: 4, Conditions: []decision.Condition{{Type: decision.ScalingActive, Reason: decision.ReasonFailedGetExternalMetric,
				Message: "the PodAutoscaler was unable to compute the replica count: a message that changes"}}},
			want: "held: FailedGetExternalMetric (see condition ScalingActive)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, pa := &podpilotv1alpha1.PodAutoscaler{}, &podpilotv1alpha1.PodAutoscaler{}
			recordLastDecision(base, pa, tc.d, 4, now)
			ld := pa.Status.LastDecision
			if ld == nil || ld.Winner != tc.want || ld.FromReplicas != 4 || ld.ToReplicas != 4 {
				t.Errorf("lastDecision = %+v, want 4 to 4 %q", ld, tc.want)
			}
		})
	}
}
