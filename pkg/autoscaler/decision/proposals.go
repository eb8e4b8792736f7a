package decision

import (
	"fmt"
	"math"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// ForecastMode says what the forecast's proposal does, as spec.prediction.mode.
type ForecastMode string

const (
	// ForecastOnly computes the forecast's proposal and reports what it would have done
	// (Explanation.WouldScaleTo) without letting it change the decision.
	ForecastOnly ForecastMode = "ForecastOnly"
	// ForecastScaleOut lets the forecast's proposal raise the metrics' proposal, never lower it.
	ForecastScaleOut ForecastMode = "ScaleOut"
)

// Forecast is the forecast's input to one round.
type Forecast struct {
	// Mode is ForecastOnly or ForecastScaleOut.
	Mode ForecastMode
	// LeadTime is how far ahead Loads are: the time new capacity takes to be ready.
	LeadTime time.Duration
	// Loads holds, per metric of Input.Metrics (by its ID), the forecast load at now + LeadTime
	// in milli-units: for Resource, Pods and ContainerResource metrics the total over the target's
	// pods, for Object and External metrics the value. NaN (or a missing entry) means no forecast.
	Loads map[MetricID]float64
}

// Floor is the minimum an active schedule window sets.
type Floor struct {
	// Replicas is the highest floor of the active windows; 0 when none is active.
	Replicas int32
	// Window names the window that sets it.
	Window string
}

// ProposalSource says where a proposal comes from.
type ProposalSource string

const (
	// MetricProposal is one metric's own proposal.
	MetricProposal ProposalSource = "Metric"
	// ForecastProposal is the forecast of one metric a lead time ahead.
	ForecastProposal ProposalSource = "Forecast"
	// ScheduleProposal is an active schedule window's floor.
	ScheduleProposal ProposalSource = "Schedule"
)

// Proposal is one candidate replica count of a round.
type Proposal struct {
	// Source is Metric, Forecast or Schedule.
	Source ProposalSource
	// Name describes it: the metric's description, or the window's name.
	Name string
	// Replicas is the proposed replica count.
	Replicas int32
}

// Explanation says how a round reached its replica count: what each source proposed, which won,
// and what stabilization, policies and limits then made of it.
type Explanation struct {
	// Proposals are the metrics' proposals, then the forecast's, then the floor's.
	Proposals []Proposal
	// Winner describes the proposal that won; empty on fast paths and metric failures.
	Winner string
	// WinnerSource is the winning proposal's source.
	WinnerSource ProposalSource
	// Proposed is the winning proposal's replica count, before normalization.
	Proposed int32
	// Stabilized is the count after the stabilization windows; Desired after policies and limits.
	Stabilized, Desired int32
	// Changes say, in words, what changed Proposed into Desired.
	Changes []string
	// ForecastRaised is true when the forecast's proposal won over the metrics' (ScaleOut).
	ForecastRaised bool
	// ForecastReplicas are the replicas the forecast of each metric (by its ID) asks for; no
	// entry for a metric without a forecast. Nil without one.
	ForecastReplicas map[MetricID]int32
	// WouldScaleTo is, in ForecastOnly mode, the replicas the forecast would have led to had it
	// been applied; 0 when it would not have raised the decision.
	WouldScaleTo int32
}

// effectiveMin returns the minimum replicas with the active floor applied: the floor raises
// minReplicas, capped at maxReplicas, before the algorithm runs.
func effectiveMin(in Input) int32 {
	return max(in.MinReplicas, min(in.Floor.Replicas, in.MaxReplicas))
}

// floorSetsMin tells whether the schedule floor is the effective minimum of in, whose
// MinReplicas Decide has already raised by effectiveMin.
func floorSetsMin(in Input) bool {
	return in.Floor.Replicas > 0 && in.MinReplicas == min(in.Floor.Replicas, in.MaxReplicas)
}

// belowMin brings replicas below the effective minimum up to it without looking at metrics, and
// says whether minReplicas or a schedule window's floor set it.
func belowMin(in Input, d Decision) Decision {
	if floorSetsMin(in) {
		d = fastPath(d, in.MinReplicas, "Current number of replicas below the floor of schedule window "+in.Floor.Window)
		d.Explanation = Explanation{Proposals: []Proposal{{Source: ScheduleProposal, Name: in.Floor.Window, Replicas: in.Floor.Replicas}},
			Winner: "schedule window " + in.Floor.Window, WinnerSource: ScheduleProposal, Proposed: in.MinReplicas,
			Stabilized: in.MinReplicas, Desired: in.MinReplicas}
		return d
	}
	return fastPath(d, in.MinReplicas, "Current number of replicas below Spec.MinReplicas")
}

// forecastProposal returns the replicas the forecast of each metric asks for at now + lead (no
// entry without a usable forecast), the largest of them and the metric it comes from.
func forecastProposal(in Input, statuses []MetricStatus) (map[MetricID]int32, int32, string) {
	if in.Forecast == nil {
		return nil, 0, ""
	}
	each := make(map[MetricID]int32, len(statuses))
	var best int32
	var from string
	for _, st := range statuses {
		load, ok := in.Forecast.Loads[st.ID()]
		if st.Err != nil || !ok {
			continue
		}
		r, ok := forecastReplicas(in, st.Target, load)
		if !ok {
			continue
		}
		each[st.ID()] = r
		if r > best {
			best, from = r, st.Description
		}
	}
	return each, best, from
}

// forecastReplicas converts a forecast load into replicas as the metric's target reads it:
// load ÷ the per-pod target for AverageValue and Utilization targets (the mean request of the
// current pods), and the current replicas scaled by load ÷ target for Value targets.
func forecastReplicas(in Input, t replicas.Target, load float64) (int32, bool) {
	if math.IsNaN(load) || math.IsInf(load, 0) || load < 0 {
		return 0, false
	}
	var per float64
	switch t.Type {
	case replicas.AverageValue:
		per = float64(t.AverageValue)
	case replicas.Utilization:
		per = meanRequest(in.Pods, t) * float64(t.Utilization) / 100
	case replicas.Value:
		if t.Value <= 0 {
			return 0, false
		}
		return saturate(ceil(float64(max(in.SpecReplicas, 1)) * load / float64(t.Value))), true
	}
	if per <= 0 || math.IsNaN(per) {
		return 0, false
	}
	return saturate(ceil(load / per)), true
}

// ceil rounds v up, except for what floating point adds to an exact count: 6.000000000001
// replicas is 6 (loads and requests are milli-units, far coarser than that). An infinite v (a
// huge load over a small target) stays infinite: subtracting its own fraction would make NaN.
func ceil(v float64) float64 {
	if math.IsInf(v, 0) {
		return v
	}
	return math.Ceil(v - 1e-9*math.Max(1, math.Abs(v)))
}

// meanRequest is the mean request of t's resource (of t's container, when set) over the pods
// that have it; NaN when none has.
func meanRequest(pods []replicas.Pod, t replicas.Target) float64 {
	var sum float64
	var n int
	for _, p := range pods {
		req := p.Requests
		if t.Container != "" {
			req = p.ContainerRequests[t.Container]
		}
		if r, ok := req[t.Resource]; ok && r > 0 {
			sum += float64(r)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// saturate converts a replica count to int32, at most math.MaxInt32 (+Inf included) and at
// least 0; NaN, which min and max would pass on, is 0.
func saturate(v float64) int32 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= math.MaxInt32:
		return math.MaxInt32
	}
	return int32(v)
}

// ForecastFloorWindow is the forecast floor's hysteresis window: the forecast's proposal is the
// highest it made within this window (see normalize.HoldFloor), so it rises at once and falls only
// once a whole window asked for less. With the tolerance (holdWithinTolerance), which holds the
// replicas while the floor wavers a replica or two under them, the window need only outlast a
// floor's wavering beyond the tolerance. As long as the scale-down stabilization window, it costs
// fewer replica-hours on bench p's traces than the 15 minutes they needed without the tolerance,
// at about as few rescales (docs/predictive-scaling.md, "Churn").
const ForecastFloorWindow = 5 * time.Minute

// withForecast adds the forecast's proposal to the metrics' combination: in ScaleOut mode it
// replaces the metrics' proposal when larger; it never lowers it. The proposal is the floor held
// by hysteresis over ForecastFloorWindow, remembered in h, which it returns updated, then held at
// the current replicas where it is within the scale-down tolerance under them.
func withForecast(in Input, c combined, h normalize.History) (combined, normalize.History) {
	c.forecastEach, c.forecast, c.forecastFrom = forecastProposal(in, c.statuses)
	c.forecast, h.ForecastFloors = normalize.HoldFloor(h.ForecastFloors, c.forecast, ForecastFloorWindow, in.Now)
	c.forecast = holdWithinTolerance(c.forecast, in.SpecReplicas, tolerances(in))
	if in.Forecast != nil && in.Forecast.Mode == ForecastScaleOut && c.forecast > c.replicas {
		c.raised = true
		c.replicas, c.metric = c.forecast, fmt.Sprintf("forecast of %s in %s", c.forecastFrom, in.Forecast.LeadTime)
	}
	return c, h
}

// holdWithinTolerance returns the forecast's proposal, floor, held at the current replicas where
// their ratio to them is within the tolerances (replicas.Tolerances.Within, as for a metric's usage
// ratio), as a metric whose usage ratio is within them proposes the current replicas: a held floor that falls
// by a replica or two does not scale down, and then up again at the forecast's next high round.
// A floor further below, or above the current replicas, is returned as it is, and so is no
// forecast (0). It only ever raises the forecast's proposal, up to the current replicas.
func holdWithinTolerance(floor, current int32, t replicas.Tolerances) int32 {
	if floor <= 0 || floor >= current || !t.Within(float64(floor)/float64(current)) {
		return floor
	}
	return current
}

// explain records the round's proposals, the winner and what normalization changed. In
// ForecastOnly mode it also normalizes the forecast's proposal, on a copy of the history, to say
// what the forecast would have done.
func explain(in Input, c combined, n normalize.Result, desired int32) Explanation {
	e := Explanation{Winner: c.metric, WinnerSource: MetricProposal, Proposed: c.replicas,
		Stabilized: n.Stabilized, Desired: desired, ForecastRaised: c.raised, Proposals: proposals(in, c), ForecastReplicas: c.forecastEach}
	if c.raised {
		e.WinnerSource = ForecastProposal
	}
	if floorSetsMin(in) && desired == in.MinReplicas && c.replicas < desired {
		e.Winner, e.WinnerSource = "schedule window "+in.Floor.Window, ScheduleProposal
	}
	e.Changes = changes(c.replicas, n, desired)
	if in.Forecast != nil && in.Forecast.Mode == ForecastOnly && c.forecast > c.replicas {
		if would := normalizeProposal(in, c.forecast); would > desired {
			e.WouldScaleTo = would
		}
	}
	return e
}

// proposals lists the valid metrics' proposals, the forecast's and the floor's.
func proposals(in Input, c combined) []Proposal {
	var out []Proposal
	for _, st := range c.statuses {
		if st.Proposes() {
			out = append(out, Proposal{Source: MetricProposal, Name: st.Description, Replicas: st.Result.Replicas})
		}
	}
	if c.forecast > 0 {
		out = append(out, Proposal{Source: ForecastProposal, Name: c.forecastFrom, Replicas: c.forecast})
	}
	if in.Floor.Replicas > 0 {
		out = append(out, Proposal{Source: ScheduleProposal, Name: in.Floor.Window, Replicas: in.Floor.Replicas})
	}
	return out
}

// changes says what stabilization, the limits and the way back from zero did to proposed.
func changes(proposed int32, n normalize.Result, desired int32) []string {
	var out []string
	if n.Stabilized != proposed {
		out = append(out, fmt.Sprintf("%s: %d to %d", n.StabilizeReason, proposed, n.Stabilized))
	}
	if n.Limited && n.Replicas != n.Stabilized {
		out = append(out, fmt.Sprintf("%s: %d to %d", n.LimitReason, n.Stabilized, n.Replicas))
	}
	if desired != n.Replicas {
		out = append(out, fmt.Sprintf("back from zero to minReplicas: %d to %d", n.Replicas, desired))
	}
	return out
}

// normalizeProposal normalizes proposal as Decide does, discarding the history it records.
func normalizeProposal(in Input, proposal int32) int32 {
	n := normalize.Normalize(normalize.Input{
		Current: in.SpecReplicas, Desired: proposal, Min: in.MinReplicas, Max: in.MaxReplicas, Behavior: in.Behavior,
		DownscaleStabilizationWindow: in.Config.DownscaleStabilizationWindow,
		History:                      normalize.SeedHistory(in.History, in.SpecReplicas, in.Now), Now: in.Now,
	})
	return n.Replicas
}
