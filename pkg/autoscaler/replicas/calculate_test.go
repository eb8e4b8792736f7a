package replicas

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

func cpuUtilization(percent int32) Target {
	return Target{Type: Utilization, Resource: corev1.ResourceCPU, Utilization: percent}
}

func averageValue(milli int64) Target {
	return Target{Type: AverageValue, AverageValue: milli}
}

// unready marks pod i of pods as never having become ready.
func unready(pods []Pod, i int) []Pod {
	pods[i].Ready = false
	pods[i].ReadyTransition = pods[i].Start
	return pods
}

func TestCalculate(t *testing.T) {
	tests := []struct {
		name    string
		current int32
		target  Target
		pods    []Pod
		samples map[string]Sample
		config  func(*Config)
		want    Result
	}{{
		name:    "seed 003 §3.2: 2 pods at 50 and 100 against average 60 scale up to ceil(1.25×2)=3",
		current: 2, target: averageValue(60_000),
		pods: podsWithRequests(1, 1), samples: samplesOf(50_000, 100_000),
		want: Result{Replicas: 3, UsageRatio: 75.0 / 60.0, AverageValue: 75_000, Ready: 2, Timestamp: now},
	}, {
		name:    "seed 003 §3.3: A1=2 and A2 missing on a scale-down counts A2 at the target, ceil(0.517×2)=2",
		current: 2, target: averageValue(60_000),
		pods: podsWithRequests(1, 1), samples: samplesOf(2_000),
		want: Result{Replicas: 2, UsageRatio: 2.0 / 60.0, AverageValue: 2_000, Ready: 1, Missing: 1, Timestamp: now},
	}, {
		name:    "usage ratio for utilization is the sum of usage over the sum of requests",
		current: 3, target: cpuUtilization(30),
		pods: podsWithRequests(1000, 1000, 1000), samples: samplesOf(300, 500, 700),
		want: Result{Replicas: 5, UsageRatio: 50.0 / 30.0, AverageValue: 500, Utilization: 50, Ready: 3, Timestamp: now},
	}, {
		name:    "ceil(ratio × ready) scales down when nothing is missing",
		current: 5, target: cpuUtilization(50),
		pods: podsWithRequests(1000, 1000, 1000, 1000, 1000), samples: samplesOf(100, 300, 500, 250, 250),
		want: Result{Replicas: 3, UsageRatio: 28.0 / 50.0, AverageValue: 280, Utilization: 28, Ready: 5, Timestamp: now},
	}, {
		name:    "custom metric average value scales up",
		current: 3, target: averageValue(15_000),
		pods: podsWithRequests(1, 1, 1), samples: samplesOf(20_000, 10_000, 30_000),
		want: Result{Replicas: 4, UsageRatio: 20_000.0 / 15_000.0, AverageValue: 20_000, Ready: 3, Timestamp: now},
	}, {
		name:    "tolerance: a ratio within 10% keeps the current replicas",
		current: 3, target: averageValue(100_000),
		pods: podsWithRequests(1, 1, 1), samples: samplesOf(105_000, 105_000, 105_000),
		want: Result{Replicas: 3, UsageRatio: 1.05, AverageValue: 105_000, Ready: 3, Timestamp: now},
	}, {
		name:    "tolerance: a smaller scale-up tolerance lets a 5% rise scale up",
		current: 3, target: averageValue(100_000),
		pods: podsWithRequests(1, 1, 1), samples: samplesOf(105_000, 105_000, 105_000),
		config: func(c *Config) { c.Tolerances.ScaleUp = 0.01 },
		want:   Result{Replicas: 4, UsageRatio: 1.05, AverageValue: 105_000, Ready: 3, Timestamp: now},
	}, {
		name:    "tolerance: a larger scale-down tolerance keeps a 30% drop",
		current: 3, target: averageValue(100_000),
		pods: podsWithRequests(1, 1, 1), samples: samplesOf(70_000, 70_000, 70_000),
		config: func(c *Config) { c.Tolerances.ScaleDown = 0.5 },
		want:   Result{Replicas: 3, UsageRatio: 0.7, AverageValue: 70_000, Ready: 3, Timestamp: now},
	}, {
		name:    "rebalance: on scale-up unready cpu pods count as 0 (upstream ScaleUpUnreadyLessScale)",
		current: 3, target: cpuUtilization(30),
		pods: unready(podsWithRequests(1000, 1000, 1000), 0), samples: samplesOf(300, 500, 700),
		want: Result{Replicas: 4, UsageRatio: 2, AverageValue: 600, Utilization: 60, Ready: 2, Ignored: 1, Timestamp: now},
	}, {
		name:    "rebalance: scale-up that unready pods at 0 bring within tolerance keeps current (upstream ScaleUpUnreadyNoScale)",
		current: 3, target: cpuUtilization(30),
		pods: unready(unready(podsWithRequests(1000, 1000, 1000), 1), 2), samples: samplesOf(400, 500, 700),
		want: Result{Replicas: 3, UsageRatio: 40.0 / 30.0, AverageValue: 400, Utilization: 40, Ready: 1, Ignored: 2, Timestamp: now},
	}, {
		name:    "rebalance: scale-down with only ignored pods uses the ready pods directly (upstream ScaleDownExcludeUnreadyPods)",
		current: 5, target: cpuUtilization(50),
		pods: unready(unready(podsWithRequests(1000, 1000, 1000, 1000, 1000), 3), 4), samples: samplesOf(100, 300, 500, 250, 250),
		want: Result{Replicas: 2, UsageRatio: 30.0 / 50.0, AverageValue: 300, Utilization: 30, Ready: 3, Ignored: 2, Timestamp: now},
	}, {
		name:    "rebalance: on scale-down missing pods count as 100% of their request (upstream MissingMetricsUnreadyScaleDown)",
		current: 4, target: cpuUtilization(50),
		pods: unready(podsWithRequests(1000, 1000, 1000, 1000), 0), samples: samplesOf(100, 100, 100),
		want: Result{Replicas: 3, UsageRatio: 10.0 / 50.0, AverageValue: 100, Utilization: 10, Ready: 2, Missing: 1, Ignored: 1, Timestamp: now},
	}, {
		name:    "rebalance: on scale-down missing pods count as the target when it is above 100%",
		current: 4, target: cpuUtilization(300),
		pods: unready(podsWithRequests(1000, 1000, 2000, 2000), 0), samples: samplesOf(200, 100, 100),
		want: Result{Replicas: 2, UsageRatio: 6.0 / 300.0, AverageValue: 100, Utilization: 6, Ready: 2, Missing: 1, Ignored: 1, Timestamp: now},
	}, {
		name:    "rebalance: on scale-up missing pods count as 0 and a ratio back at target keeps current (upstream MissingMetricsNoChangeGt)",
		current: 2, target: cpuUtilization(100),
		pods: podsWithRequests(1000, 1000), samples: samplesOf(1900),
		want: Result{Replicas: 2, UsageRatio: 1.9, AverageValue: 1900, Utilization: 190, Ready: 1, Missing: 1, Timestamp: now},
	}, {
		name:    "rebalance: scale-up with missing and unready pods at 0 still scales (upstream MissingMetricsUnreadyScaleUp)",
		current: 3, target: cpuUtilization(50),
		pods: unready(podsWithRequests(1000, 1000, 1000), 0), samples: samplesOf(100, 2000),
		want: Result{Replicas: 4, UsageRatio: 4, AverageValue: 2000, Utilization: 200, Ready: 1, Missing: 1, Ignored: 1, Timestamp: now},
	}, {
		name:    "rebalance: a fill-in that flips the direction keeps current (upstream ScaleUpCMUnreadyHotCpuScaleWouldScaleDown shape)",
		current: 3, target: averageValue(15_000),
		pods: func() []Pod {
			p := podsWithRequests(1, 1, 1)
			p[0].Phase = corev1.PodPending
			p[2].Phase = corev1.PodPending
			return p
		}(),
		samples: samplesOf(50_000, 15_500, 30_000),
		want:    Result{Replicas: 3, UsageRatio: 15_500.0 / 15_000.0, AverageValue: 15_500, Ready: 1, Ignored: 2, Timestamp: now},
	}, {
		name:    "rebalance: a proposal that would move against the new ratio keeps current (upstream rolling update with max surge)",
		current: 2, target: cpuUtilization(50),
		pods: podsWithRequests(1000, 1000, 1000), samples: samplesOf(100, 100),
		want: Result{Replicas: 2, UsageRatio: 10.0 / 50.0, AverageValue: 100, Utilization: 10, Ready: 2, Missing: 1, Timestamp: now},
	}, {
		name:    "samples of pods not selected are unused",
		current: 1, target: averageValue(10_000),
		pods: podsWithRequests(1), samples: map[string]Sample{"pod-0": {Value: 10_000, Timestamp: now}, "stranger": {Value: 900_000, Timestamp: now}},
		want: Result{Replicas: 1, UsageRatio: 1, AverageValue: 10_000, Ready: 1, Timestamp: now},
	}, {
		name:    "the result carries the oldest sample timestamp",
		current: 2, target: averageValue(10_000),
		pods: podsWithRequests(1, 1), samples: map[string]Sample{"pod-0": {Value: 10_000, Timestamp: now}, "pod-1": {Value: 10_000, Timestamp: now.Add(-time.Minute)}},
		want: Result{Replicas: 2, UsageRatio: 1, AverageValue: 10_000, Ready: 2, Timestamp: now.Add(-time.Minute)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tc.config != nil {
				tc.config(&cfg)
			}
			got, err := Calculate(Input{CurrentReplicas: tc.current, Target: tc.target, Pods: tc.pods, Samples: tc.samples, Config: cfg, Now: now})
			if err != nil {
				t.Fatalf("Calculate() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Calculate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculateErrors(t *testing.T) {
	huge := int64(5e18) // 5e15 units in milli-units
	noCPURequest := podsWithRequests(1000, 1000)
	noCPURequest[1].Requests = map[corev1.ResourceName]int64{corev1.ResourceMemory: 1}
	tests := []struct {
		name    string
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    error
	}{{
		name: "no pods is ErrNoPods", target: averageValue(1), samples: samplesOf(1),
		want: ErrNoPods,
	}, {
		name: "no samples is ErrNoMetrics", target: averageValue(1), pods: podsWithRequests(1),
		want: ErrNoMetrics,
	}, {
		name: "only unready cpu pods is ErrNoMetrics", target: cpuUtilization(50),
		pods: unready(podsWithRequests(1000), 0), samples: samplesOf(1),
		want: ErrNoMetrics,
	}, {
		name: "utilization with a pod lacking the request is ErrMissingRequest", target: cpuUtilization(50),
		pods: noCPURequest, samples: samplesOf(100, 100),
		want: ErrMissingRequest,
	}, {
		name: "utilization with zero requests is ErrMissingRequest", target: cpuUtilization(50),
		pods: podsWithRequests(0), samples: samplesOf(100),
		want: ErrMissingRequest,
	}, {
		name: "a zero target is ErrInvalidTarget", target: averageValue(0),
		pods: podsWithRequests(1), samples: samplesOf(1),
		want: ErrInvalidTarget,
	}, {
		name: "utilization without a resource is ErrInvalidTarget", target: Target{Type: Utilization, Utilization: 50},
		pods: podsWithRequests(1), samples: samplesOf(1),
		want: ErrInvalidTarget,
	}, {
		name: "a Value target for a per-pod metric is ErrInvalidTarget", target: Target{Type: Value, Value: 1},
		pods: podsWithRequests(1), samples: samplesOf(1),
		want: ErrInvalidTarget,
	}, {
		name:   "two pods at 5e15 sum past int64 milli-units: ErrValueOutOfRange, not an average of -4.2e18 and a proposal of 0 (issue 21)",
		target: averageValue(100_000), pods: podsWithRequests(1, 1), samples: samplesOf(huge, huge),
		want: ErrValueOutOfRange,
	}, {
		name:   "a utilization past int32 percent is ErrValueOutOfRange, not a wrapped int32 (issue 21)",
		target: cpuUtilization(50), pods: podsWithRequests(1, 1), samples: samplesOf(3e10, 3e10),
		want: ErrValueOutOfRange,
	}, {
		name:   "a requests sum past int64 is ErrValueOutOfRange",
		target: cpuUtilization(50), pods: podsWithRequests(math.MaxInt64, math.MaxInt64), samples: samplesOf(1, 1),
		want: ErrValueOutOfRange,
	}, {
		name:   "a negative custom value is ErrNegativeValue, not a proposal of 0 (issue 21)",
		target: averageValue(100_000), pods: podsWithRequests(1, 1), samples: samplesOf(200_000, -1_000),
		want: ErrNegativeValue,
	}, {
		name:   "a negative request is ErrNegativeValue",
		target: cpuUtilization(50), pods: podsWithRequests(500, -500), samples: samplesOf(100, 100),
		want: ErrNegativeValue,
	}, {
		name:   "a used sample that could not be converted fails the metric with its error",
		target: averageValue(100_000), pods: podsWithRequests(1, 1),
		samples: map[string]Sample{"pod-0": {Value: 100_000, Timestamp: now}, "pod-1": {Err: ErrValueOutOfRange, Timestamp: now}},
		want:    ErrValueOutOfRange,
	}, {
		name:   "a target beyond int64 milli-units is ErrInvalidTarget naming why",
		target: Target{Type: AverageValue, Err: ErrValueOutOfRange}, pods: podsWithRequests(1), samples: samplesOf(1),
		want: ErrValueOutOfRange,
	}, {
		name:   "a missing pod's fallback past int64 on a scale-down is ErrValueOutOfRange",
		target: cpuUtilization(1000), pods: podsWithRequests(math.MaxInt64/2, math.MaxInt64/2), samples: samplesOf(1),
		want: ErrValueOutOfRange,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Calculate(Input{CurrentReplicas: 1, Target: tc.target, Pods: tc.pods, Samples: tc.samples, Config: DefaultConfig(), Now: now})
			if !errors.Is(err, tc.want) {
				t.Errorf("Calculate() error = %v, want %v", err, tc.want)
			}
		})
	}
}
