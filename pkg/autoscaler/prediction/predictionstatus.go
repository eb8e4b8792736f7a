package prediction

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// Reasons of the PredictionActive condition set here; the reasons a history is refused come from
// forecast.Reason.
const (
	// ReasonForecastRaised means the forecast's proposal won over the metrics' this round (ScaleOut).
	ReasonForecastRaised = "ForecastRaised"
	// ReasonForecastNotRaised means the metrics' proposal was as high or higher (ScaleOut).
	ReasonForecastNotRaised = "ForecastNotRaised"
	// ReasonForecastOnly means the forecast is reported, never applied; the message says what it
	// would have done.
	ReasonForecastOnly = "ForecastOnly"
	// ReasonHistoryUnavailable means no metric's history could be read.
	ReasonHistoryUnavailable = "HistoryUnavailable"
)

// maxForecastMetrics is the bound of status.prediction.metrics, the schema's.
const maxForecastMetrics = 42

// Accuracies is the leader's memory of how each metric's forecasts of one PodAutoscaler fared,
// by metric (see accuracy); it lives in the leader's memory of the PodAutoscaler.
type Accuracies map[string]*accuracy

// Record records the round's forecast in pa's status: status.prediction and the
// PredictionActive condition, and the forecasts due by now against this round's loads for the
// accuracy (see accuracy). With prediction off, both go, and so does the accuracy. A forecast
// is joined to its metric's load this round (ms) by the metric's identity, and named as
// status.currentMetrics names it: a round that took a fast path has no metric statuses.
// remember applies a change to pa's Accuracies in the leader's memory, if pa is still known;
// period is the sync period.
func Record(remember func(change func(*Accuracies)), base, pa *podpilotv1alpha1.PodAutoscaler, pr Round, ms []decision.Metric,
	d decision.Decision, now time.Time, period time.Duration) {
	if pr.mode == "" {
		pa.Status.Prediction = nil
		if meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive) != nil { // Remove copies the list every call
			meta.RemoveStatusCondition(&pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
		}
		remember(func(acc *Accuracies) { *acc = nil })
		return
	}
	wape := map[string]float64{}
	remember(func(acc *Accuracies) {
		if *acc == nil {
			*acc = Accuracies{}
		}
		for _, mf := range pr.metrics {
			k := forecastKey(mf.id)
			a := (*acc)[k]
			if a == nil {
				a = &accuracy{seed: checkpointedWAPE(base.Status.Prediction, status.MetricStatusOf(mf.id))}
				(*acc)[k] = a
			}
			current := math.NaN()
			if m, ok := metricByID(ms, mf.id); ok {
				current = aggregate(m)
			}
			a.settle(now, current, period)
			a.add(now.Add(pr.lead), mf.point)
			wape[k] = a.wape(now, period)
		}
	})
	s := predictionStatus(pr, d, wape)
	if old := base.Status.Prediction; old != nil && predictionClose(*old, *s) {
		s = old.DeepCopy()
	}
	pa.Status.Prediction = s
	setPredictionCondition(pa, pr, d, now)
}

// metricByID is the metric of ms named id.
func metricByID(ms []decision.Metric, id decision.MetricID) (decision.Metric, bool) {
	for _, m := range ms {
		if m.ID() == id {
			return m, true
		}
	}
	return decision.Metric{}, false
}

// forecastReplicas is the forecast's proposal in e; 0 without one.
func forecastReplicas(e decision.Explanation) int32 {
	var r int32
	for _, p := range e.Proposals {
		if p.Source == decision.ForecastProposal {
			r = max(r, p.Replicas)
		}
	}
	return r
}

// predictionStatus is status.prediction for the round: the lead time, the newest model, the
// forecast's proposal and each metric's forecast load (the load provisioned for) and accuracy.
func predictionStatus(pr Round, d decision.Decision, wape map[string]float64) *podpilotv1alpha1.PredictionStatus {
	s := &podpilotv1alpha1.PredictionStatus{LeadTimeSeconds: int32(pr.lead / time.Second), Replicas: forecastReplicas(d.Explanation)}
	for _, mf := range pr.metrics {
		if mf.err != nil {
			continue
		}
		if s.FittedTime == nil || mf.fitted.After(s.FittedTime.Time) {
			s.FittedTime, s.Model = ptr.To(metav1.NewTime(mf.fitted)), string(mf.model)
		}
		id := status.MetricStatusOf(mf.id)
		f := podpilotv1alpha1.MetricForecast{Type: id.Type, Name: id.Name, DescribedObject: id.DescribedObject, Container: id.Container,
			Replicas: d.Explanation.ForecastReplicas[mf.id]}
		if milli := mf.load * 1000; milli >= 0 && milli < math.MaxInt64/2 {
			f.Value = resource.NewMilliQuantity(int64(math.Round(milli)), resource.DecimalSI)
		}
		if w, ok := wape[forecastKey(mf.id)]; ok && !math.IsNaN(w) {
			f.WAPEPercent = ptr.To(int32(math.Round(min(w, 100) * 100)))
		}
		if len(s.Metrics) < maxForecastMetrics {
			s.Metrics = append(s.Metrics, f)
		}
	}
	return s
}

// predictionClose reports whether two prediction statuses differ only in forecast values within
// MetricChangeTolerance and accuracies within a point: such a change alone does not rewrite the
// status.
func predictionClose(old, s podpilotv1alpha1.PredictionStatus) bool {
	if len(old.Metrics) != len(s.Metrics) {
		return false
	}
	for i := range old.Metrics {
		if !status.QuantityClose(old.Metrics[i].Value, s.Metrics[i].Value) {
			return false
		}
		s.Metrics[i].Value = old.Metrics[i].Value
		if o, n := old.Metrics[i].WAPEPercent, s.Metrics[i].WAPEPercent; o != nil && n != nil && *o-*n <= 1 && *n-*o <= 1 {
			s.Metrics[i].WAPEPercent = o
		}
	}
	return equality.Semantic.DeepEqual(old, s)
}

// setPredictionCondition sets PredictionActive: True when a metric has a forecast, with whether
// it raised the decision (or would have, in ForecastOnly); False with why no metric has one.
func setPredictionCondition(pa *podpilotv1alpha1.PodAutoscaler, pr Round, d decision.Decision, now time.Time) {
	var errs []error
	forecasts := 0
	for _, mf := range pr.metrics {
		if mf.err != nil {
			errs = append(errs, mf.err)
		} else {
			forecasts++
		}
	}
	if forecasts == 0 {
		reason := ReasonHistoryUnavailable
		if len(errs) > 0 && forecast.Reason(errs[0]) != "" {
			reason = forecast.Reason(errs[0])
		}
		status.SetCondition(pa, podpilotv1alpha1.ConditionPredictionActive, false, reason, cut("the forecast is off: "+errors.Join(errs...).Error()), now)
		return
	}
	e := d.Explanation
	lead := pr.lead.String()
	var reason, msg string
	switch {
	case pr.mode == decision.ForecastOnly && e.WouldScaleTo > 0:
		reason, msg = ReasonForecastOnly, fmt.Sprintf("the forecast in %s would have scaled to %d replicas (ForecastOnly writes no scale)", lead, e.WouldScaleTo)
	case pr.mode == decision.ForecastOnly:
		reason, msg = ReasonForecastOnly, fmt.Sprintf("the forecast in %s would not have raised the replicas", lead)
	case len(e.Proposals) == 0:
		reason, msg = ReasonForecastNotRaised, "no metric was read this round, so the decision holds and the forecast with it"
	case e.ForecastRaised:
		reason, msg = ReasonForecastRaised, fmt.Sprintf("the forecast in %s raised the proposal to %d replicas", lead, e.Proposed)
	default:
		reason, msg = ReasonForecastNotRaised, fmt.Sprintf("the metrics ask for as many replicas as the forecast in %s or more", lead)
	}
	if len(errs) > 0 {
		msg += "; some metrics have no forecast: " + errors.Join(errs...).Error()
	}
	status.SetCondition(pa, podpilotv1alpha1.ConditionPredictionActive, true, reason, cut(msg), now)
}

// cut makes one line of msg, which may join one error per metric, within maxPredictionMessage.
func cut(msg string) string {
	return status.TruncateMessage(strings.ReplaceAll(msg, "\n", "; "), maxPredictionMessage)
}

// maxPredictionMessage bounds the PredictionActive message: a reader wants the first causes.
const maxPredictionMessage = 2048

// accuracy is the leader's memory of how one metric's forecasts fared against what happened
// over the last day: forecasts wait until their time, then count against the load of
// the round at that time, in hourly buckets. It lives in the leader's memory; a new leader shows
// the WAPE its predecessor checkpointed in status (seed) until it has counted an hour of its own.
type accuracy struct {
	pending []dueForecast
	hours   [24]hourAccuracy
	seed    float64
}

// checkpointedWAPE is the WAPE status.prediction shows for the metric id, as a fraction; NaN
// when it shows none. An entry written before forecasts carried their metric's type (an
// upgrade) is matched by name alone.
func checkpointedWAPE(s *podpilotv1alpha1.PredictionStatus, id podpilotv1alpha1.MetricStatus) float64 {
	if s == nil {
		return math.NaN()
	}
	for _, f := range s.Metrics {
		same := f.Name == id.Name && (f.Type == "" ||
			f.Type == id.Type && f.DescribedObject == id.DescribedObject && f.Container == id.Container)
		if same && f.WAPEPercent != nil {
			return float64(*f.WAPEPercent) / 100
		}
	}
	return math.NaN()
}

// dueForecast is a forecast of the load at a time.
type dueForecast struct {
	at    time.Time
	value float64
}

// hourAccuracy is the accuracy of the forecasts due in one hour.
type hourAccuracy struct {
	hour int64
	acc  forecast.Accuracy
}

// add queues the forecast value of the load at at; NaN is not queued.
func (a *accuracy) add(at time.Time, value float64) {
	if !math.IsNaN(value) {
		a.pending = append(a.pending, dueForecast{at: at, value: value})
	}
}

// settle counts the forecasts due by now against actual, the load now; those due more than one
// sync period before now (no round ran at their time) are dropped uncounted.
func (a *accuracy) settle(now time.Time, actual float64, period time.Duration) {
	n := 0
	for _, f := range a.pending {
		if f.at.After(now) {
			a.pending[n] = f
			n++
			continue
		}
		if now.Sub(f.at) <= period {
			h := f.at.Unix() / 3600
			b := &a.hours[h%24]
			if b.hour != h {
				*b = hourAccuracy{hour: h}
			}
			b.acc.Add(f.value, actual)
		}
	}
	a.pending = a.pending[:n]
}

// wape is the weighted absolute percentage error (a fraction) of the forecasts due over the last
// day; NaN when none was counted. Until this leader has counted an hour of forecasts (at one
// per period), it is the checkpointed one, when there is one.
func (a *accuracy) wape(now time.Time, period time.Duration) float64 {
	var sum forecast.Accuracy
	h := now.Unix() / 3600
	for _, b := range a.hours {
		if b.hour > h-24 {
			sum.AbsError += b.acc.AbsError
			sum.AbsActual += b.acc.AbsActual
			sum.N += b.acc.N
		}
	}
	if !math.IsNaN(a.seed) && time.Duration(sum.N)*period < time.Hour {
		return a.seed
	}
	return sum.WAPE()
}
