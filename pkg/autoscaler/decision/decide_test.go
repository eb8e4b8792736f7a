package decision

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

var (
	now         = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)
	errFetch    = errors.New("prometheus unavailable")
	mi          = int64(1 << 20)
	qpsTarget   = replicas.Target{Type: replicas.AverageValue, AverageValue: 2000 * 1000}
	cpuTarget   = replicas.Target{Type: replicas.Utilization, Utilization: 50}
	memTarget   = replicas.Target{Type: replicas.AverageValue, AverageValue: 256 * mi * 1000}
	validMetric = Condition{Type: ScalingActive, Status: true, Reason: ReasonValidMetricFound}
)

// seedPods returns n ready pods requesting 500m cpu and 512Mi memory.
func seedPods(n int) []replicas.Pod {
	pods := make([]replicas.Pod, n)
	for i := range pods {
		pods[i] = replicas.Pod{
			Name: fmt.Sprintf("vg1-vanguard-%d", i), Phase: corev1.PodRunning, Ready: true,
			Start: now.Add(-time.Hour), ReadyTransition: now.Add(-time.Hour),
			Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500, corev1.ResourceMemory: 512 * mi * 1000},
		}
	}
	return pods
}

// perPod returns samples for the first len(values) seed pods.
func perPod(values ...int64) map[string]replicas.Sample {
	s := make(map[string]replicas.Sample, len(values))
	for i, v := range values {
		s[fmt.Sprintf("vg1-vanguard-%d", i)] = replicas.Sample{Value: v, Timestamp: now, Window: time.Minute}
	}
	return s
}

// seedMetrics is the seed 000 example spec: qps averageValue 2000, cpu 50%, memory 256Mi.
func seedMetrics(qps, cpu, mem map[string]replicas.Sample) []Metric {
	return []Metric{
		{Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget, Samples: qps},
		{Kind: ResourceMetric, Name: "cpu", Target: cpuTarget, Samples: cpu},
		{Kind: ResourceMetric, Name: "memory", Target: memTarget, Samples: mem},
	}
}

// summary is the part of a Decision the rule tables compare; messages are checked by reason.
type summary struct {
	Desired    int32
	Rescale    bool
	Metric     string
	Reason     string
	Conditions []Condition
	Proposals  []int32
	Failed     []string
}

func summarize(d Decision) summary {
	s := summary{Desired: d.DesiredReplicas, Rescale: d.Rescale, Metric: d.Metric, Reason: d.Reason}
	for _, c := range d.Conditions {
		c.Message = ""
		s.Conditions = append(s.Conditions, c)
	}
	for _, st := range d.Statuses {
		if st.Err != nil {
			s.Failed = append(s.Failed, st.FailureReason)
			continue
		}
		s.Proposals = append(s.Proposals, st.Result.Replicas)
	}
	return s
}

func normalized(stabilize string, limited bool, limit string) []Condition {
	return []Condition{
		validMetric,
		{Type: AbleToScale, Status: true, Reason: stabilize},
		{Type: ScalingLimited, Status: limited, Reason: limit},
	}
}

func TestDecide(t *testing.T) {
	quiet := func(n int) map[string]replicas.Sample { // below every target
		v := make([]int64, n)
		for i := range v {
			v[i] = 50
		}
		return perPod(v...)
	}
	tests := []struct {
		name    string
		in      Input
		want    summary
		wantErr error
	}{{
		name: "fast path: a target at zero replicas disables scaling",
		in:   Input{SpecReplicas: 0, MinReplicas: 1, MaxReplicas: 5},
		want: summary{Conditions: []Condition{{Type: ScalingActive, Status: false, Reason: ReasonScalingDisabled}}},
	}, {
		name: "fast path: replicas above max scale to max without metrics and set no condition (upstream TestTooManyReplicas)",
		in:   Input{SpecReplicas: 8, MinReplicas: 1, MaxReplicas: 5},
		want: summary{Desired: 5, Rescale: true, Reason: "Current number of replicas above Spec.MaxReplicas"},
	}, {
		name: "fast path: replicas below min scale to min without metrics and set no condition (upstream TestTooFewReplicas)",
		in:   Input{SpecReplicas: 1, MinReplicas: 2, MaxReplicas: 5},
		want: summary{Desired: 2, Rescale: true, Reason: "Current number of replicas below Spec.MinReplicas"},
	}, {
		name: "seed 000 spec: the largest proposal wins (qps 3000 per pod → 3 over cpu → 2 and memory → 1)",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(2),
			Metrics: seedMetrics(perPod(3000*1000, 3000*1000), perPod(250, 250), perPod(100*mi*1000, 100*mi*1000))},
		want: summary{Desired: 3, Rescale: true, Metric: "pods metric zdns_vanguard_qps", Reason: "pods metric zdns_vanguard_qps above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{3, 2, 1}},
	}, {
		name: "seed 000 spec: the result is clamped to maxReplicas 5",
		in: Input{SpecReplicas: 4, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(4),
			Metrics: seedMetrics(perPod(4000*1000, 4000*1000, 4000*1000, 4000*1000), quiet(4), quiet(4))},
		want: summary{Desired: 5, Rescale: true, Metric: "pods metric zdns_vanguard_qps", Reason: "pods metric zdns_vanguard_qps above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, true, normalize.ReasonTooManyReplicas), Proposals: []int32{8, 1, 1}},
	}, {
		name: "seed 003 §3.3: one pod's metric lost with A1=2 against 60 keeps 2 replicas",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(2),
			Metrics: []Metric{{Kind: PodsMetric, Name: "mem", Target: replicas.Target{Type: replicas.AverageValue, AverageValue: 60_000}, Samples: perPod(2_000)}}},
		want: summary{Desired: 2, Metric: "pods metric mem",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{2}},
	}, {
		name: "partial metric failure: scales up on the valid metrics",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(2),
			Metrics: []Metric{{Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget, FetchErr: errFetch}, {Kind: ResourceMetric, Name: "cpu", Target: cpuTarget, Samples: perPod(500, 500)}}},
		want: summary{Desired: 4, Rescale: true, Metric: "cpu resource utilization (percentage of request)", Reason: "cpu resource utilization (percentage of request) above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{4}, Failed: []string{ReasonFailedGetPodsMetric}},
		wantErr: errFetch,
	}, {
		name: "partial metric failure never scales down",
		in: Input{SpecReplicas: 4, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(4),
			Metrics: seedMetrics(nil, quiet(4), quiet(4))},
		want: summary{Desired: 4, Conditions: []Condition{{Type: ScalingActive, Status: false, Reason: ReasonFailedGetPodsMetric}},
			Proposals: []int32{1, 1}, Failed: []string{ReasonFailedGetPodsMetric}},
		wantErr: replicas.ErrNoMetrics,
	}, {
		name: "all metrics failing keeps the current replicas with the first failure's reason",
		in: Input{SpecReplicas: 3, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(3),
			Metrics: []Metric{{Kind: ExternalMetric, Name: "queue", Target: replicas.Target{Type: replicas.Value, Value: 1}, FetchErr: errFetch}, {Kind: ResourceMetric, Name: "cpu", Target: cpuTarget, FetchErr: errFetch}}},
		want: summary{Desired: 3, Conditions: []Condition{{Type: ScalingActive, Status: false, Reason: ReasonFailedGetExternalMetric}},
			Failed: []string{ReasonFailedGetExternalMetric, ReasonFailedGetResourceMetric}},
		wantErr: errFetch,
	}, {
		name:    "no metrics keeps the current replicas",
		in:      Input{SpecReplicas: 3, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(3)},
		want:    summary{Desired: 3, Conditions: []Condition{{Type: ScalingActive, Status: false, Reason: ReasonInvalidMetricSourceType}}},
		wantErr: ErrNoMetricSpecs,
	}, {
		name: "an unknown metric kind fails that metric",
		in: Input{SpecReplicas: 3, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(3),
			Metrics: []Metric{{Kind: "Bogus", Name: "ingress", Target: qpsTarget}}},
		want:    summary{Desired: 3, Conditions: []Condition{{Type: ScalingActive, Status: false, Reason: ReasonInvalidMetricSourceType}}, Failed: []string{ReasonInvalidMetricSourceType}},
		wantErr: ErrUnknownMetricKind,
	}, {
		name: "downscale stabilization holds a recent higher recommendation",
		in: Input{SpecReplicas: 4, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(4), Metrics: seedMetrics(quiet(4), quiet(4), quiet(4)),
			History: normalize.History{Recommendations: []normalize.Recommendation{{Replicas: 4, Time: now.Add(-time.Minute)}}}},
		want: summary{Desired: 4, Metric: "pods metric zdns_vanguard_qps", Reason: "All metrics below target",
			Conditions: normalized(normalize.ReasonScaleDownStabilized, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{1, 1, 1}},
	}, {
		name: "a behavior's scale-up tolerance overrides the configured one",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(2),
			Metrics:  []Metric{{Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget, Samples: perPod(2100*1000, 2100*1000)}},
			Behavior: &normalize.Behavior{ScaleUp: &normalize.Rules{Tolerance: new(0.01)}}},
		want: summary{Desired: 3, Rescale: true, Metric: "pods metric zdns_vanguard_qps", Reason: "pods metric zdns_vanguard_qps above target",
			Conditions: normalized(normalize.ReasonReadyForNewScale, false, normalize.ReasonDesiredWithinRange), Proposals: []int32{3}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Config, tc.in.Now = DefaultConfig(), now
			got := Decide(tc.in)
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			if (tc.wantErr == nil && got.MetricsErr != nil) || !errors.Is(got.MetricsErr, tc.wantErr) {
				t.Errorf("Decide().MetricsErr = %v, want %v", got.MetricsErr, tc.wantErr)
			}
		})
	}
}

func TestDecideStatusesAndHistory(t *testing.T) {
	in := Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: seedPods(2), Config: DefaultConfig(), Now: now,
		Metrics: seedMetrics(perPod(3000*1000, 3000*1000), perPod(250, 200), perPod(100*mi*1000, 100*mi*1000))}
	got := Decide(in)
	type current struct {
		Description  string
		AverageValue int64
		Utilization  int32
	}
	var statuses []current
	for _, s := range got.Statuses {
		statuses = append(statuses, current{s.Description, s.Result.AverageValue, s.Result.Utilization})
	}
	wantStatuses := []current{
		{"pods metric zdns_vanguard_qps", 3000 * 1000, 0},
		{"cpu resource utilization (percentage of request)", 225, 45},
		{"memory resource", 100 * mi * 1000, 0},
	}
	if diff := cmp.Diff(wantStatuses, statuses); diff != "" {
		t.Errorf("statuses carry the raw average and utilization for status.currentMetrics (-want +got):\n%s", diff)
	}
	wantHistory := normalize.History{Recommendations: []normalize.Recommendation{{Replicas: 2, Time: now, Since: now}, {Replicas: 3, Time: now, Since: now}}}
	if diff := cmp.Diff(wantHistory, got.History); diff != "" {
		t.Errorf("history is seeded with current replicas and records the proposal (-want +got):\n%s", diff)
	}
}
