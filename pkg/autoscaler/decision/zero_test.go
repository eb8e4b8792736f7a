package decision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// queue is an External metric with a Value target of 10 (milli-units) and the given total.
func queue(total int64) Metric {
	return Metric{Kind: ExternalMetric, Name: "queue_length", Target: replicas.Target{Type: replicas.Value, Value: 10_000}, Values: []int64{total}}
}

func TestDecideScaleToZero(t *testing.T) {
	noDownWindow := time.Duration(0)
	fastDown := &normalize.Behavior{ScaleDown: &normalize.Rules{StabilizationWindow: &noDownWindow}}
	disabled := []Condition{{Type: ScalingActive, Status: false, Reason: ReasonScalingDisabled}}
	tests := []struct {
		name        string
		in          Input
		want        summary
		holdsAtZero bool
	}{{
		name: "scale from zero on an External Value metric: ceil(25/10) = 3 replicas",
		in:   Input{SpecReplicas: 0, MinReplicas: 0, MaxReplicas: 10, ScaledToZero: true, Metrics: []Metric{queue(25_000)}},
		want: summary{Desired: 3, Rescale: true, Metric: "external metric queue_length", Reason: "external metric queue_length above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{3}},
	}, {
		name: "scale from zero is limited as any scale-up: without behavior to max(2 × 0, 4) = 4",
		in:   Input{SpecReplicas: 0, MinReplicas: 0, MaxReplicas: 10, ScaledToZero: true, Metrics: []Metric{queue(95_000)}},
		want: summary{Desired: 4, Rescale: true, Metric: "external metric queue_length", Reason: "external metric queue_length above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, true, normalize.ReasonScaleUpLimit), Proposals: []int32{10}},
	}, {
		name: "a target held at zero stays at zero while every metric proposes zero",
		in:   Input{SpecReplicas: 0, MinReplicas: 0, MaxReplicas: 10, ScaledToZero: true, Metrics: []Metric{queue(0)}},
		want: summary{Metric: "external metric queue_length",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{0}},
	}, {
		name: "a target a person set to zero stays disabled, whatever the metrics ask",
		in:   Input{SpecReplicas: 0, MinReplicas: 0, MaxReplicas: 10, Metrics: []Metric{queue(25_000)}},
		want: summary{Conditions: disabled},
	}, {
		name: "a target held at zero without an Object or External metric left stays disabled",
		in: Input{SpecReplicas: 0, MinReplicas: 0, MaxReplicas: 10, ScaledToZero: true,
			Metrics: []Metric{{Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget}}},
		want: summary{Conditions: disabled},
	}, {
		name: "a target held at zero after minReplicas was raised comes back to minReplicas though the metrics propose zero",
		in: Input{SpecReplicas: 0, MinReplicas: 2, MaxReplicas: 10, ScaledToZero: true, Behavior: &normalize.Behavior{},
			Metrics: []Metric{queue(0)}},
		want: summary{Desired: 2, Rescale: true, Metric: "external metric queue_length",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{0}},
	}, {
		name: "scale to zero when every metric proposes zero, minReplicas is 0 and the behavior allows it",
		in: Input{SpecReplicas: 2, MinReplicas: 0, MaxReplicas: 10, Pods: seedPods(2), Behavior: fastDown,
			Metrics: []Metric{queue(0)}},
		want: summary{Desired: 0, Rescale: true, Metric: "external metric queue_length", Reason: "All metrics below target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{0}},
		holdsAtZero: true,
	}, {
		name: "no scale to zero while another metric proposes a replica",
		in: Input{SpecReplicas: 2, MinReplicas: 0, MaxReplicas: 10, Pods: seedPods(2), Behavior: fastDown,
			Metrics: []Metric{queue(0), {Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget, Samples: perPod(500*1000, 500*1000)}}},
		want: summary{Desired: 1, Rescale: true, Metric: "pods metric zdns_vanguard_qps", Reason: "All metrics below target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{0, 1}},
	}, {
		name: "the downscale stabilization window holds a scale to zero back",
		in: Input{SpecReplicas: 2, MinReplicas: 0, MaxReplicas: 10, Pods: seedPods(2), Metrics: []Metric{queue(0)},
			History: normalize.History{Recommendations: []normalize.Recommendation{{Replicas: 2, Time: now.Add(-time.Minute)}}}},
		want: summary{Desired: 2, Metric: "external metric queue_length", Reason: "All metrics below target",
			Conditions: normalized(normalize.ReasonScaleDownStabilized, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{0}},
	}, {
		name: "minReplicas 1 never scales to zero",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(2), Behavior: fastDown,
			Metrics: []Metric{queue(0)}},
		want: summary{Desired: 1, Rescale: true, Metric: "external metric queue_length", Reason: "All metrics below target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, true, normalize.ReasonTooFewReplicas), Proposals: []int32{0}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Config, tc.in.Now = DefaultConfig(), now
			got := Decide(tc.in)
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			if got.HoldsAtZero != tc.holdsAtZero {
				t.Errorf("Decide().HoldsAtZero = %v, want %v", got.HoldsAtZero, tc.holdsAtZero)
			}
		})
	}
}

// TestScaledToZeroConditionTransitions runs rounds as the controller does: the ScaledToZero
// condition is set after every rescale from the decision, and read back into the next round.
func TestScaledToZeroConditionTransitions(t *testing.T) {
	noDownWindow := time.Duration(0)
	in := Input{MinReplicas: 0, MaxReplicas: 10, Config: DefaultConfig(), Now: now,
		Behavior: &normalize.Behavior{ScaleDown: &normalize.Rules{StabilizationWindow: &noDownWindow}}}
	type round struct {
		name      string
		current   int32
		queue     int64
		want      int32
		condition *Condition // after the round; nil when the round does not rescale
	}
	held := Condition{Type: ScaledToZero, Status: true, Reason: ReasonScaledToZero}
	notHeld := Condition{Type: ScaledToZero, Status: false, Reason: ReasonNotScaledToZero}
	rounds := []round{
		{name: "an idle queue scales 2 replicas to zero: True", current: 2, queue: 0, want: 0, condition: &held},
		{name: "held at zero while the queue stays empty: no rescale, still True", current: 0, queue: 0, want: 0},
		{name: "work in the queue scales up from zero: False, NotScaledToZero", current: 0, queue: 35_000, want: 4, condition: &notHeld},
		{name: "a person sets the target to zero: disabled, stays False", current: 0, queue: 35_000, want: 0},
	}
	var cond *Condition
	for _, r := range rounds {
		in.SpecReplicas, in.StatusReplicas, in.Pods = r.current, r.current, seedPods(int(r.current))
		in.Metrics = []Metric{queue(r.queue)}
		in.ScaledToZero = cond != nil && cond.Status
		d := Decide(in)
		if d.DesiredReplicas != r.want {
			t.Fatalf("%s: desired %d, want %d", r.name, d.DesiredReplicas, r.want)
		}
		if d.Rescale {
			c := d.ScaledToZeroCondition()
			c.Message = ""
			cond = &c
		}
		if r.condition != nil && (cond == nil || *cond != *r.condition) {
			t.Fatalf("%s: condition %+v, want %+v", r.name, cond, *r.condition)
		}
		in.History, in.Now = d.History, in.Now.Add(15*time.Second)
	}
	if cond == nil || cond.Status {
		t.Errorf("after a person set the target to zero the condition is %+v, want False", cond)
	}
}
