package decision_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// roundSpec is what one fuzzed round is made of: the spec (bounds, floor, prediction mode, the
// metric), the history the forecast fits and the clock.
type roundSpec struct {
	current, minR, maxR, floor int32
	mode, kind, method         uint8
	zero                       bool
	target, value              int64
	pods                       uint8
	// The history: days of it at a step chosen by stepChoice, a daily wave base ± amp, one
	// special value at specialAt, a gap, or a constant.
	days, stepChoice      uint8
	base, amp, special    float64
	specialAt, gapAt, gap uint16
	constant              bool
	// The clock: now as Unix seconds, the history's end before now and the lead, in seconds;
	// rawLoad, when not 0, is the forecast's load as is (NaN, ±Inf, negative, huge).
	now, endBefore, lead int64
	rawLoad              float64
}

// steps are the history steps tried: those that divide a day, and some that do not or are not
// steps at all.
var steps = []time.Duration{time.Hour, 30 * time.Minute, 15 * time.Minute, 7 * time.Minute, 0, -time.Minute}

// history is the fuzzed series ending at end.
func (r roundSpec) history(end time.Time) forecast.Series {
	step := steps[int(r.stepChoice)%len(steps)]
	n := 1
	if step > 0 {
		n = max(1, int(time.Duration(r.days%16)*24*time.Hour/step))
	}
	s := forecast.Series{Start: end.Add(-time.Duration(n) * step), Step: step, Values: make([]float64, n)}
	for i := range s.Values {
		v := r.base
		if !r.constant {
			v += r.amp * math.Sin(2*math.Pi*float64(i)*float64(step)/float64(24*time.Hour))
		}
		if i >= int(r.gapAt) && i < int(r.gapAt)+int(r.gap) {
			v = math.NaN()
		}
		s.Values[i] = v
	}
	s.Values[int(r.specialAt)%n] = r.special
	return s
}

// metric is the fuzzed metric of the round, one of every kind, over pods.
func (r roundSpec) metric(pods []replicas.Pod) decision.Metric {
	samples := map[string]replicas.Sample{}
	for _, p := range pods {
		samples[p.Name] = replicas.Sample{Value: r.value, Timestamp: p.Start.Add(time.Hour), Window: time.Minute}
	}
	switch r.kind % 5 {
	case 0:
		return decision.Metric{Kind: decision.PodsMetric, Name: "qps", Target: replicas.Target{Type: replicas.AverageValue, AverageValue: r.target}, Samples: samples}
	case 1:
		return decision.Metric{Kind: decision.ResourceMetric, Name: "cpu", Target: replicas.Target{Type: replicas.Utilization, Utilization: int32(r.target % 1000)}, Samples: samples}
	case 2:
		return decision.Metric{Kind: decision.ExternalMetric, Name: "queue", Target: replicas.Target{Type: replicas.Value, Value: r.target}, Values: []int64{r.value}}
	case 3:
		return decision.Metric{Kind: decision.ObjectMetric, Name: "rps", DescribedKind: "Service", DescribedName: "web",
			Target: replicas.Target{Type: replicas.AverageValue, AverageValue: r.target}, Values: []int64{r.value}}
	}
	return decision.Metric{Kind: decision.ContainerResourceMetric, Name: "cpu",
		Target: replicas.Target{Type: replicas.Utilization, Resource: corev1.ResourceCPU, Container: "app", Utilization: int32(r.target % 1000)}, Samples: samples}
}

// input is the round's decision input with the forecast of its history, as the controller makes
// it: the model's forecast one lead ahead anchored on the metric's load now, in milli-units.
func (r roundSpec) input() decision.Input {
	now := time.Unix(r.now%(1<<40), 0).UTC()
	minR := max(0, r.minR%200)
	maxR := max(1, minR, r.maxR%200)
	in := decision.Input{SpecReplicas: max(0, r.current%300), StatusReplicas: max(0, r.current%300), MinReplicas: minR, MaxReplicas: maxR,
		ScaledToZero: r.zero, Config: decision.DefaultConfig(), Now: now}
	if r.floor%50 > 0 {
		in.Floor = decision.Floor{Replicas: r.floor % 50, Window: "business"}
	}
	for i := range int(r.pods % 12) {
		in.Pods = append(in.Pods, replicas.Pod{Name: fmt.Sprintf("p-%d", i), Phase: corev1.PodRunning, Ready: true,
			Start: now.Add(-time.Hour), ReadyTransition: now.Add(-time.Hour),
			Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}, ContainerRequests: map[string]map[corev1.ResourceName]int64{"app": {corev1.ResourceCPU: 500}}})
	}
	m := r.metric(in.Pods)
	in.Metrics = []decision.Metric{m}
	modes := []decision.ForecastMode{"", decision.ForecastOnly, decision.ForecastScaleOut}
	mode := modes[int(r.mode)%len(modes)]
	if mode == "" {
		return in
	}
	load := r.rawLoad
	if load == 0 {
		load = math.NaN()
		methods := forecast.Methods()
		if model, err := forecast.Fit(r.history(now.Add(-time.Duration(r.endBefore%7200)*time.Second)), methods[int(r.method)%len(methods)]); err == nil {
			current := float64(r.value) / 1000 * float64(max(1, len(in.Pods)))
			if v, err := model.AtFrom(now.Add(time.Duration(r.lead%7200)*time.Second), now, current); err == nil {
				load = v * (1 + model.Headroom) * 1000
			}
		}
	}
	in.Forecast = &decision.Forecast{Mode: mode, LeadTime: time.Duration(r.lead%7200) * time.Second, Loads: map[decision.MetricID]float64{m.ID(): load}}
	return in
}

// checkRound asserts what a round promises whatever its input: the replicas it writes are within
// [minReplicas raised by the floor, maxReplicas], or 0 for a target held at zero with
// minReplicas 0; a round that writes nothing keeps the current replicas; what the forecast
// would have done (ForecastOnly) is within the bounds too.
func checkRound(t *testing.T, in decision.Input, d decision.Decision) {
	lo := max(in.MinReplicas, min(in.Floor.Replicas, in.MaxReplicas))
	switch {
	case !d.Rescale && d.DesiredReplicas != in.SpecReplicas:
		t.Fatalf("no rescale but desired %d != current %d", d.DesiredReplicas, in.SpecReplicas)
	case d.Rescale && d.DesiredReplicas == 0 && in.MinReplicas == 0:
	case d.Rescale && (d.DesiredReplicas < lo || d.DesiredReplicas > in.MaxReplicas):
		t.Fatalf("rescale to %d outside [%d, %d] (current %d)", d.DesiredReplicas, lo, in.MaxReplicas, in.SpecReplicas)
	}
	if w := d.Explanation.WouldScaleTo; w != 0 && (w < lo || w > in.MaxReplicas) {
		t.Fatalf("the forecast would have scaled to %d, outside [%d, %d]", w, lo, in.MaxReplicas)
	}
	for id, r := range d.Explanation.ForecastReplicas {
		if r < 0 {
			t.Fatalf("the forecast of %v asks for %d replicas", id, r)
		}
	}
}

// FuzzRound fuzzes one round of the algorithm without I/O: the forecast fitted on an arbitrary
// history (NaN, ±Inf, 1e308, negative values, gaps, a constant, one point, steps that divide no
// day) and read at an arbitrary clock, then Decide over arbitrary bounds, floors, prediction
// modes and every metric kind and fast path. No input panics, and every decision is within the
// bounds (see checkRound).
func FuzzRound(f *testing.F) {
	for _, r := range seedRounds() {
		f.Add(r.current, r.minR, r.maxR, r.floor, r.mode, r.kind, r.method, r.zero, r.target, r.value, r.pods,
			r.days, r.stepChoice, r.base, r.amp, r.special, r.specialAt, r.gapAt, r.gap, r.constant, r.now, r.endBefore, r.lead, r.rawLoad)
	}
	f.Fuzz(func(t *testing.T, current, minR, maxR, floor int32, mode, kind, method uint8, zero bool, target, value int64, pods uint8,
		days, stepChoice uint8, base, amp, special float64, specialAt, gapAt, gap uint16, constant bool, now, endBefore, lead int64, rawLoad float64) {
		r := roundSpec{current: current, minR: minR, maxR: maxR, floor: floor, mode: mode, kind: kind, method: method, zero: zero,
			target: target, value: value, pods: pods, days: days, stepChoice: stepChoice, base: base, amp: amp, special: special,
			specialAt: specialAt, gapAt: gapAt, gap: gap, constant: constant, now: now, endBefore: endBefore, lead: lead, rawLoad: rawLoad}
		in := r.input()
		checkRound(t, in, decision.Decide(in))
	})
}

// seedRounds is the seed corpus: each fast path under each prediction mode, and the histories
// and loads that crashed or could crash a round.
func seedRounds() []roundSpec {
	const at = 1_795_000_000 // 2026-11-18
	ok := roundSpec{current: 3, minR: 1, maxR: 10, mode: 2, target: 2_000_000, value: 3_000_000, pods: 3,
		days: 3, stepChoice: 1, base: 1000, amp: 600, special: 1000, now: at, lead: 600}
	var out []roundSpec
	for mode := range uint8(3) {
		for _, path := range []func(*roundSpec){
			func(*roundSpec) {},
			func(r *roundSpec) { r.current = 12 },                                    // above maxReplicas
			func(r *roundSpec) { r.minR, r.current = 5, 2 },                          // below minReplicas
			func(r *roundSpec) { r.floor, r.current = 8, 2 },                         // below a schedule floor
			func(r *roundSpec) { r.current = 0 },                                     // at zero: disabled
			func(r *roundSpec) { r.current, r.zero, r.minR, r.kind = 0, true, 0, 2 }, // held at zero
		} {
			r := ok
			r.mode = mode
			path(&r)
			out = append(out, r)
		}
	}
	for _, special := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, math.MaxFloat64, 1e155, -1, forecast.MaxValue} {
		r := ok
		r.special = special
		out = append(out, r)
	}
	for _, raw := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -5, 1e308, math.MaxFloat64} {
		r := ok
		r.rawLoad = raw
		out = append(out, r)
	}
	gappy, constant, single, weekly, badStep := ok, ok, ok, ok, ok
	gappy.gapAt, gappy.gap = 10, 100
	constant.constant = true
	single.days = 0
	weekly.days, weekly.stepChoice = 15, 0
	badStep.stepChoice = 3
	for kind := range uint8(5) {
		r := ok
		r.kind = kind
		out = append(out, r)
	}
	return append(out, gappy, constant, single, weekly, badStep)
}

func TestFuzzRoundSeedsReachAFittedForecast(t *testing.T) {
	fitted := 0
	for _, r := range seedRounds() {
		in := r.input()
		if in.Forecast == nil || r.rawLoad != 0 {
			continue
		}
		for _, load := range in.Forecast.Loads {
			if !math.IsNaN(load) {
				fitted++
			}
		}
	}
	if fitted < 10 {
		t.Errorf("%d seeds reach a fitted forecast, want at least 10: the fuzzer would start far from the forecast", fitted)
	}
}
