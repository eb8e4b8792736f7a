package decision

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// qpsAt returns the seed's qps metric with every one of n pods at perPodQPS.
func qpsAt(n int, perPodQPS int64) []Metric {
	v := make([]int64, n)
	for i := range v {
		v[i] = perPodQPS * 1000
	}
	return []Metric{{Kind: PodsMetric, Name: "zdns_vanguard_qps", Target: qpsTarget, Samples: perPod(v...)}}
}

// forecastQPS forecasts a total of qps for the one qps metric, two minutes ahead.
func forecastQPS(mode ForecastMode, qps float64) *Forecast {
	return &Forecast{Mode: mode, LeadTime: 2 * time.Minute, Loads: map[MetricID]float64{qpsAt(1, 0)[0].ID(): qps * 1000}}
}

// explained is the part of an Explanation the tables compare.
type explained struct {
	Desired        int32
	Reason         string
	WinnerSource   ProposalSource
	Proposals      []Proposal
	Changes        []string
	ForecastRaised bool
	WouldScaleTo   int32
}

func TestForecastAndFloorProposals(t *testing.T) {
	qps := "pods metric zdns_vanguard_qps"
	pods := seedPods(2)
	tests := []struct {
		name string
		in   Input
		want explained
	}{{
		name: "ScaleOut: a forecast above the metrics' proposal raises it (6000 qps in 2m at 2000 per pod → 3)",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: qpsAt(2, 2000), Forecast: forecastQPS(ForecastScaleOut, 6000)},
		want: explained{Desired: 3, Reason: "forecast of " + qps + " in 2m0s above target", WinnerSource: ForecastProposal, ForecastRaised: true,
			Proposals: []Proposal{{MetricProposal, qps, 2}, {ForecastProposal, qps, 3}}},
	}, {
		name: "ScaleOut: a forecast below the metrics' proposal never lowers it",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: qpsAt(2, 4000), Forecast: forecastQPS(ForecastScaleOut, 1000)},
		want: explained{Desired: 4, Reason: qps + " above target", WinnerSource: MetricProposal,
			Proposals: []Proposal{{MetricProposal, qps, 4}, {ForecastProposal, qps, 1}}},
	}, {
		name: "ScaleOut: the forecast's proposal goes through the limits: maxReplicas 5",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: pods, Metrics: qpsAt(2, 2000), Forecast: forecastQPS(ForecastScaleOut, 20000)},
		want: explained{Desired: 4, Reason: "forecast of " + qps + " in 2m0s above target", WinnerSource: ForecastProposal, ForecastRaised: true,
			Proposals: []Proposal{{MetricProposal, qps, 2}, {ForecastProposal, qps, 10}},
			Changes:   []string{normalize.ReasonScaleUpLimit + ": 10 to 4"}},
	}, {
		name: "ScaleOut: a forecast above the current replicas holds them while the metrics fall (scale-down stabilization sees it too)",
		in: Input{SpecReplicas: 4, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(4), Metrics: qpsAt(4, 500), Forecast: forecastQPS(ForecastScaleOut, 8000),
			Behavior: &normalize.Behavior{ScaleDown: &normalize.Rules{StabilizationWindow: new(time.Duration)}}},
		want: explained{Desired: 4, WinnerSource: ForecastProposal, ForecastRaised: true,
			Proposals: []Proposal{{MetricProposal, qps, 1}, {ForecastProposal, qps, 4}}},
	}, {
		name: "ForecastOnly: the decision is the metrics' and the explanation says what the forecast would have done",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: qpsAt(2, 2000), Forecast: forecastQPS(ForecastOnly, 10000)},
		want: explained{Desired: 2, WinnerSource: MetricProposal, WouldScaleTo: 4,
			Proposals: []Proposal{{MetricProposal, qps, 2}, {ForecastProposal, qps, 5}}},
	}, {
		name: "no forecast for a metric (NaN) leaves the metrics' proposal alone",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: qpsAt(2, 2000), Forecast: forecastQPS(ForecastScaleOut, math.NaN())},
		want: explained{Desired: 2, WinnerSource: MetricProposal, Proposals: []Proposal{{MetricProposal, qps, 2}}},
	}, {
		name: "a Utilization forecast is the total usage over the mean request × target: 2000m at 50% of 500m → 8",
		in: Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Forecast: &Forecast{Mode: ForecastScaleOut, LeadTime: time.Minute, Loads: map[MetricID]float64{{Kind: ResourceMetric, Name: "cpu"}: 2000}},
			Metrics: []Metric{{Kind: ResourceMetric, Name: "cpu", Target: cpuTarget, Samples: perPod(250, 250)}}},
		want: explained{Desired: 4, Reason: "forecast of cpu resource utilization (percentage of request) in 1m0s above target", WinnerSource: ForecastProposal, ForecastRaised: true,
			Proposals: []Proposal{{MetricProposal, "cpu resource utilization (percentage of request)", 2}, {ForecastProposal, "cpu resource utilization (percentage of request)", 8}},
			Changes:   []string{normalize.ReasonScaleUpLimit + ": 8 to 4"}},
	}, {
		name: "an External Value forecast scales the current replicas by forecast ÷ target: 2 × 30/10 → 6",
		in: Input{SpecReplicas: 2, StatusReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: []Metric{queue(10_000)},
			Forecast: &Forecast{Mode: ForecastScaleOut, LeadTime: time.Minute, Loads: map[MetricID]float64{queue(0).ID(): 30_000}}},
		want: explained{Desired: 4, Reason: "forecast of external metric queue_length in 1m0s above target", WinnerSource: ForecastProposal, ForecastRaised: true,
			Proposals: []Proposal{{MetricProposal, "external metric queue_length", 2}, {ForecastProposal, "external metric queue_length", 6}},
			Changes:   []string{normalize.ReasonScaleUpLimit + ": 6 to 4"}},
	}, {
		name: "a schedule floor above the current replicas raises them at once, before any metric is read",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: qpsAt(2, 100), Floor: Floor{Replicas: 7, Window: "business"}},
		want: explained{Desired: 7, Reason: "Current number of replicas below the floor of schedule window business", WinnerSource: ScheduleProposal,
			Proposals: []Proposal{{ScheduleProposal, "business", 7}}},
	}, {
		name: "a schedule floor above maxReplicas is capped at maxReplicas",
		in:   Input{SpecReplicas: 2, MinReplicas: 1, MaxReplicas: 5, Pods: pods, Metrics: qpsAt(2, 100), Floor: Floor{Replicas: 7, Window: "business"}},
		want: explained{Desired: 5, Reason: "Current number of replicas below the floor of schedule window business", WinnerSource: ScheduleProposal,
			Proposals: []Proposal{{ScheduleProposal, "business", 7}}},
	}, {
		name: "metrics go on scaling above an active floor; the floor never competes with them",
		in:   Input{SpecReplicas: 3, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(3), Metrics: qpsAt(3, 4000), Floor: Floor{Replicas: 3, Window: "business"}},
		want: explained{Desired: 6, Reason: qps + " above target", WinnerSource: MetricProposal,
			Proposals: []Proposal{{MetricProposal, qps, 6}, {ScheduleProposal, "business", 3}}},
	}, {
		name: "at the floor with quiet metrics, the floor holds the replicas and wins the explanation",
		in: Input{SpecReplicas: 3, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(3), Metrics: qpsAt(3, 100), Floor: Floor{Replicas: 3, Window: "business"},
			Behavior: &normalize.Behavior{ScaleDown: &normalize.Rules{StabilizationWindow: new(time.Duration)}}},
		want: explained{Desired: 3, Reason: "All metrics below target", WinnerSource: ScheduleProposal,
			Proposals: []Proposal{{MetricProposal, qps, 1}, {ScheduleProposal, "business", 3}}, Changes: []string{normalize.ReasonTooFewReplicas + ": 1 to 3"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Config, tc.in.Now = DefaultConfig(), now
			d := Decide(tc.in)
			e := d.Explanation
			got := explained{Desired: d.DesiredReplicas, Reason: d.Reason, WinnerSource: e.WinnerSource, Proposals: e.Proposals,
				Changes: e.Changes, ForecastRaised: e.ForecastRaised, WouldScaleTo: e.WouldScaleTo}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestForecastNeverLowersTheDecision checks the scale-out-only rule over a grid: whatever the
// forecast, ScaleOut decides at least what the metrics alone decide, and ForecastOnly exactly that.
func TestForecastNeverLowersTheDecision(t *testing.T) {
	for current := int32(1); current <= 6; current++ {
		for _, perPod := range []int64{0, 500, 1900, 2500, 6000} {
			for _, fc := range []float64{0, 1000, 7000, 30000, math.NaN()} {
				in := Input{SpecReplicas: current, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(int(current)),
					Metrics: qpsAt(int(current), perPod), Config: DefaultConfig(), Now: now}
				alone := Decide(in).DesiredReplicas
				in.Forecast = forecastQPS(ForecastScaleOut, fc)
				if got := Decide(in).DesiredReplicas; got < alone {
					t.Errorf("current %d, %d qps per pod, forecast %g: ScaleOut decided %d, below the metrics' %d", current, perPod, fc, got, alone)
				}
				in.Forecast = forecastQPS(ForecastOnly, fc)
				if got := Decide(in).DesiredReplicas; got != alone {
					t.Errorf("current %d, %d qps per pod, forecast %g: ForecastOnly decided %d, the metrics %d", current, perPod, fc, got, alone)
				}
			}
		}
	}
}

func TestAHugeForecastLoadAsksForTheMostReplicasNeverANegativeCount(t *testing.T) {
	pods := seedPods(2)
	tests := []struct {
		name   string
		metric Metric
		load   float64
	}{
		{name: "a Value target: 2 replicas × MaxFloat64 ÷ target overflows to +Inf, read as the most replicas (FuzzRound/85dc44952e9cd605)",
			metric: queue(10_000), load: math.MaxFloat64},
		{name: "a Utilization target: MaxFloat64 over a small per-pod share overflows to +Inf, read as the most replicas",
			metric: Metric{Kind: ResourceMetric, Name: "cpu", Target: replicas.Target{Type: replicas.Utilization, Utilization: 1}, Samples: perPod(250, 250)},
			load:   math.MaxFloat64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{SpecReplicas: 2, StatusReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Metrics: []Metric{tt.metric}, Now: now,
				Config: DefaultConfig(), Forecast: &Forecast{Mode: ForecastOnly, LeadTime: time.Minute, Loads: map[MetricID]float64{tt.metric.ID(): tt.load}}}
			d := Decide(in)
			if got := d.Explanation.ForecastReplicas[tt.metric.ID()]; got != math.MaxInt32 {
				t.Errorf("forecast replicas = %d, want %d", got, int32(math.MaxInt32))
			}
			if w := d.Explanation.WouldScaleTo; w != 0 && (w < 1 || w > 10) {
				t.Errorf("would scale to %d, want 0 (not above the decision) or within [1, 10]", w)
			}
		})
	}
}
