package decision

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// The property of issue 21 §1 over extreme quantities: for every metric kind, whatever value a
// metric carries, the metric's proposal is either what upstream's arithmetic gives when computed
// on unbounded integers (the oracle below), or an error, and an error holds the replicas. A
// value the calculators cannot represent may be an error; a negative one must be; no value ever
// turns into a silent minimum.

// extremes are sample values as Prometheus may answer them: zero, denormals, sub-milli
// fractions, values around the int64 milli-unit limit (9.22e15), huge ones, negatives, NaN and ±Inf.
var extremes = []float64{
	0, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 0.0004, 0.001, 1, 100, 150, 1e6, 1e15, 9.2e15,
	9.3e15, 1e16, 1e18, 1e300, math.MaxFloat64, math.Copysign(0, -1), -0.0004, -0.001, -1, -1e300,
	math.NaN(), math.Inf(1), math.Inf(-1),
}

// provided converts v to a quantity as podpilot's provider does (pkg/provider/metricsapi's
// quantity): milli precision below 1e15, the decimal form above; NaN and ±Inf are no data (false),
// which drops the pod's sample or the series.
func provided(v float64) (resource.Quantity, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return resource.Quantity{}, false
	}
	if math.Abs(v) < 1e15 {
		return *resource.NewMilliQuantity(int64(math.Round(v*1000)), resource.DecimalSI), true
	}
	return resource.MustParse(strconv.FormatFloat(v, 'e', -1, 64)), true
}

// exactMilli is the provided quantity of v in milli-units, unbounded.
func exactMilli(v float64) *big.Int {
	if math.Abs(v) < 1e15 {
		return big.NewInt(int64(math.Round(v * 1000)))
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'e', -1, 64))
	r.Mul(r, big.NewRat(1000, 1))
	return new(big.Int).Quo(r.Num(), r.Denom()) // an integer for |v| ≥ 1e15
}

// extremeKind is one metric kind with its target, the value its other pods or series carry, and
// its oracle: upstream's arithmetic on unbounded integers, with whether every value, sum and
// utilization on the way is representable (int64 milli-units, int32 percent).
type extremeKind struct {
	name    string
	perPod  bool
	normal  float64
	metric  func(values []float64) Metric
	oracle  func(milli []*big.Int, current int32) (int32, bool)
	request int64
	object  bool
}

const extremePods = 3

// extremeKinds covers every metric kind: 3 ready pods at 3 replicas, the others at the target.
func extremeKinds() []extremeKind {
	avg := replicas.Target{Type: replicas.AverageValue, AverageValue: 100_000}
	util := replicas.Target{Type: replicas.Utilization, Resource: corev1.ResourceCPU, Utilization: 50}
	appUtil := util
	appUtil.Container = "app"
	value := replicas.Target{Type: replicas.Value, Value: 30_000}
	perSeries := replicas.Target{Type: replicas.AverageValue, AverageValue: 10_000}
	perPod := func(kind MetricKind, name string, t replicas.Target) func([]float64) Metric {
		return func(vs []float64) Metric {
			return Metric{Kind: kind, Name: name, Target: t, Samples: extremeSamples(vs)}
		}
	}
	total := func(kind MetricKind, t replicas.Target) func([]float64) Metric {
		return func(vs []float64) Metric {
			return Metric{Kind: kind, Name: "queue", DescribedKind: "Service", DescribedName: "web", Target: t, Values: extremeValues(vs)}
		}
	}
	return []extremeKind{
		{name: "Pods AverageValue 100", perPod: true, normal: 100, metric: perPod(PodsMetric, "qps", avg), oracle: averageOracle(100_000)},
		{name: "Resource cpu Utilization 50%", perPod: true, normal: 0.25, metric: perPod(ResourceMetric, "cpu", util), oracle: utilizationOracle(50, 500), request: 500},
		{name: "ContainerResource cpu Utilization 50%", perPod: true, normal: 0.25, metric: perPod(ContainerResourceMetric, "cpu", appUtil), oracle: utilizationOracle(50, 500), request: 500},
		{name: "External Value 30", normal: 10, metric: total(ExternalMetric, value), oracle: valueOracle(30_000)},
		{name: "External AverageValue 10", normal: 10, metric: total(ExternalMetric, perSeries), oracle: totalAverageOracle(10_000)},
		{name: "Object Value 30", normal: 30, metric: total(ObjectMetric, value), oracle: valueOracle(30_000), object: true},
		{name: "Object AverageValue 10", normal: 30, metric: total(ObjectMetric, perSeries), oracle: totalAverageOracle(10_000), object: true},
	}
}

// extremeSamples are the samples of pods vg1-vanguard-0… with values vs, converted as the
// metrics package converts them (replicas.MilliOf); a value the provider drops has no sample.
func extremeSamples(vs []float64) map[string]replicas.Sample {
	out := map[string]replicas.Sample{}
	for i, v := range vs {
		q, ok := provided(v)
		if !ok {
			continue
		}
		s := replicas.Sample{Timestamp: now}
		s.Value, s.Err = replicas.MilliOf(q)
		if s.Err != nil {
			s.Value = 0
		}
		out[fmt.Sprintf("vg1-vanguard-%d", i)] = s
	}
	return out
}

// extremeValues are the series of an External metric (or an Object's one value) the provider
// keeps; the metrics package fails the fetch when one of them does not convert (see fetchFails).
func extremeValues(vs []float64) []int64 {
	var out []int64
	for _, v := range vs {
		if q, ok := provided(v); ok {
			m, _ := replicas.MilliOf(q)
			out = append(out, m)
		}
	}
	return out
}

// fetchFails reports whether the metrics package fails the fetch of a whole-target metric: one
// of its series (or the object's value) does not convert.
func fetchFails(vs []float64) bool {
	for _, v := range vs {
		if q, ok := provided(v); ok {
			if _, err := replicas.MilliOf(q); err != nil {
				return true
			}
		}
	}
	return false
}

func TestExtremeQuantitiesYieldTheCorrectProposalOrAnErrorThatHolds(t *testing.T) {
	outcomes := map[string]int{}
	defer func() {
		t.Logf("%d cases: %d proposals equal to upstream's arithmetic on unbounded integers, %d equal to the proposal without a dropped NaN/±Inf, %d errors that held the replicas",
			outcomes["correct"]+outcomes["dropped"]+outcomes["held"], outcomes["correct"], outcomes["dropped"], outcomes["held"])
	}()
	for _, k := range extremeKinds() {
		n := extremePods
		if k.object {
			n = 1
		}
		for _, v := range extremes {
			for _, all := range []bool{false, true} {
				vs := make([]float64, n)
				for i := range vs {
					vs[i] = k.normal
					if i == 0 || all {
						vs[i] = v
					}
				}
				t.Run(fmt.Sprintf("%s/%g/all=%t", k.name, v, all), func(t *testing.T) { outcomes[checkExtreme(t, k, vs)]++ })
			}
		}
	}
}

// decideOn decides at 3 replicas with 3 ready pods on the metric of kind k carrying vs.
func decideOn(k extremeKind, vs []float64) Decision {
	pods := seedPods(extremePods)
	for i := range pods {
		pods[i].Requests = map[corev1.ResourceName]int64{corev1.ResourceCPU: k.request}
		pods[i].ContainerRequests = map[string]map[corev1.ResourceName]int64{"app": {corev1.ResourceCPU: k.request}}
	}
	m := k.metric(vs)
	if !k.perPod && fetchFails(vs) {
		m = Metric{Kind: m.Kind, Name: m.Name, Target: m.Target, FetchErr: replicas.ErrValueOutOfRange}
	}
	return Decide(Input{SpecReplicas: extremePods, StatusReplicas: extremePods, MinReplicas: 1, MaxReplicas: 10, Pods: pods,
		Metrics: []Metric{m}, Config: DefaultConfig(), Now: now})
}

// checkExtreme checks the property for the metric of kind k carrying vs: an error holds, and
// only an unrepresentable, negative or absent value may fail; otherwise the proposal is the
// oracle's, or, for values the provider drops (NaN, ±Inf), the proposal without them (a
// missing pod, as upstream's). It returns which of these held: held, dropped or correct.
func checkExtreme(t *testing.T, k extremeKind, vs []float64) string {
	d := decideOn(k, vs)
	s := d.Statuses[0]
	kept, dropped := keptValues(vs)
	milli := make([]*big.Int, len(kept))
	negative := false
	for i, v := range kept {
		milli[i] = exactMilli(v)
		negative = negative || milli[i].Sign() < 0
	}
	want, representable := int32(0), false
	if len(kept) > 0 && !negative {
		want, representable = k.oracle(milli, extremePods)
	}
	switch {
	case s.Err != nil:
		if representable && !dropped {
			t.Errorf("a representable, non-negative value failed the metric: %v", s.Err)
		}
		if d.DesiredReplicas != extremePods || d.Rescale || len(d.Conditions) != 1 || d.Conditions[0].Type != ScalingActive || d.Conditions[0].Status {
			t.Errorf("a failed metric did not hold: desired %d, rescale %t, conditions %+v", d.DesiredReplicas, d.Rescale, d.Conditions)
		}
		return "held"
	case negative:
		t.Errorf("a negative value was data: proposal %d", s.Result.Replicas)
	case dropped:
		w := decideOn(k, kept).Statuses[0]
		if w.Err != nil || s.Result.Replicas != w.Result.Replicas {
			t.Errorf("proposal %d, want %d as without the dropped value (%v)", s.Result.Replicas, w.Result.Replicas, w.Err)
		}
		return "dropped"
	case s.Result.Replicas != want:
		t.Errorf("proposal %d, want upstream's arithmetic on unbounded integers: %d", s.Result.Replicas, want)
	}
	return "correct"
}

// keptValues are the values the provider keeps, and whether it dropped one.
func keptValues(vs []float64) ([]float64, bool) {
	var kept []float64
	for _, v := range vs {
		if _, ok := provided(v); ok {
			kept = append(kept, v)
		}
	}
	return kept, len(kept) < len(vs)
}

// inInt64 reports whether every x fits int64.
func inInt64(xs ...*big.Int) bool {
	for _, x := range xs {
		if !x.IsInt64() {
			return false
		}
	}
	return true
}

// toFloat is upstream's float64(x) of an int64, unbounded.
func toFloat(x *big.Int) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}

func sum(milli []*big.Int) *big.Int {
	total := new(big.Int)
	for _, m := range milli {
		total.Add(total, m)
	}
	return total
}

// ceilReplicas is upstream's int32(math.Ceil(f)), saturated.
func ceilReplicas(f float64) int32 {
	return int32(min(max(math.Ceil(f), 0), math.MaxInt32))
}

func within(ratio float64) bool {
	return 1-replicas.DefaultTolerance <= ratio && ratio <= 1+replicas.DefaultTolerance
}

// averageOracle is upstream's GetMetricReplicas: the truncated average over the target.
func averageOracle(target int64) func([]*big.Int, int32) (int32, bool) {
	return func(milli []*big.Int, current int32) (int32, bool) {
		total := sum(milli)
		average := new(big.Int).Quo(total, big.NewInt(int64(len(milli))))
		ratio := toFloat(average) / float64(target)
		if within(ratio) {
			return current, inInt64(append(milli, total)...)
		}
		return ceilReplicas(ratio * float64(len(milli))), inInt64(append(milli, total)...)
	}
}

// utilizationOracle is upstream's GetResourceReplicas: the truncated percentage of the requests.
func utilizationOracle(target int32, request int64) func([]*big.Int, int32) (int32, bool) {
	return func(milli []*big.Int, current int32) (int32, bool) {
		total := sum(milli)
		utilization := new(big.Int).Mul(total, big.NewInt(100))
		utilization.Quo(utilization, big.NewInt(request*int64(len(milli))))
		ok := inInt64(append(milli, total)...) && utilization.Cmp(big.NewInt(math.MaxInt32)) <= 0
		ratio := toFloat(utilization) / float64(target)
		if within(ratio) {
			return current, ok
		}
		return ceilReplicas(ratio * float64(len(milli))), ok
	}
}

// valueOracle is upstream's GetExternalMetricReplicas (and GetObjectMetricReplicas) for a Value
// target: the ratio of the sum to the target times the ready pods.
func valueOracle(target int64) func([]*big.Int, int32) (int32, bool) {
	return func(milli []*big.Int, current int32) (int32, bool) {
		total := sum(milli)
		ratio := toFloat(total) / float64(target)
		if within(ratio) {
			return current, inInt64(append(milli, total)...)
		}
		return ceilReplicas(ratio * float64(extremePods)), inInt64(append(milli, total)...)
	}
}

// totalAverageOracle is upstream's GetExternalPerPodMetricReplicas (and
// GetObjectPerPodMetricReplicas): the sum over the target per replica.
func totalAverageOracle(target int64) func([]*big.Int, int32) (int32, bool) {
	return func(milli []*big.Int, current int32) (int32, bool) {
		total := sum(milli)
		f := toFloat(total)
		if within(f / (float64(target) * float64(current))) {
			return current, inInt64(append(milli, total)...)
		}
		return ceilReplicas(f / float64(target)), inInt64(append(milli, total)...)
	}
}
