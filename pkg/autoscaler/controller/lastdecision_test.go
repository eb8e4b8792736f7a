package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
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
