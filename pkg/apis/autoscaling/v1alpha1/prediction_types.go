package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of prediction and schedules (see docs/predictive-scaling.md).
const (
	// ConditionPredictionActive says whether the forecast is on: True with reason ForecastRaised,
	// ForecastNotRaised or ForecastOnly (would have raised or not, said in the message); False
	// with the reason it is off (HistoryTooShort, HistoryGappy, NotSeasonal, InvalidHistory, NoBetterThanPersistence,
	// HeadroomTooHigh, HistoryUnavailable).
	ConditionPredictionActive = "PredictionActive"
	// ConditionScheduleActive says whether a schedule window's floor holds (True, WindowActive),
	// none does (False, NoActiveWindow), or a window cannot be read (False, InvalidSchedule).
	ConditionScheduleActive = "ScheduleActive"
)

// Bounds of prediction and schedules.
const (
	// MaxScheduleWindows bounds spec.schedules.
	MaxScheduleWindows = 20
	// DefaultHistoryDays is the history the forecast fits when spec.prediction.historyDays is unset.
	DefaultHistoryDays = 28
)

// PredictionMode says what the forecast does.
// +kubebuilder:validation:Enum=Off;ForecastOnly;ScaleOut
type PredictionMode string

const (
	// PredictionOff computes no forecast (the default).
	PredictionOff PredictionMode = "Off"
	// PredictionForecastOnly forecasts and reports in status, conditions and metrics what the
	// forecast would have done, and never lets it change the replicas.
	PredictionForecastOnly PredictionMode = "ForecastOnly"
	// PredictionScaleOut lets the forecast raise the replicas ahead of the load, never lower them.
	PredictionScaleOut PredictionMode = "ScaleOut"
)

// PredictionSpec configures predictive scale-out: each metric's load is forecast from its own
// Prometheus history (daily and weekly seasonality, level and trend) one lead time ahead, and
// the replicas it needs join the metrics' proposals, combined by the largest. Behaviors,
// stabilization and maxReplicas still apply.
type PredictionSpec struct {
	// Mode is Off (the default), ForecastOnly or ScaleOut.
	// +kubebuilder:default=Off
	// +optional
	Mode PredictionMode `json:"mode,omitempty"`
	// HistoryDays is how many days of history the forecast fits, up to what Prometheus
	// retains; it defaults to 28. Two days fit the daily pattern, two weeks the weekly one.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=56
	// +optional
	HistoryDays *int32 `json:"historyDays,omitempty"`
	// LeadTimeSeconds is how far ahead to forecast: the time new capacity takes to be ready.
	// When unset, it is the observed time from pod creation to Ready of the target's recent
	// pods (a high percentile) plus one sync period.
	// +kubebuilder:validation:Minimum=15
	// +kubebuilder:validation:Maximum=3600
	// +optional
	LeadTimeSeconds *int32 `json:"leadTimeSeconds,omitempty"`
}

// ScheduleWindow is a floor on a calendar: from each start, for the duration, the replicas are
// at least minReplicas. While several windows are active, the highest floor holds. Metrics go
// on scaling above it; a floor above maxReplicas is capped at maxReplicas.
//
// +kubebuilder:validation:XValidation:rule="!self.start.startsWith('TZ=') && !self.start.startsWith('CRON_TZ=')",message="set the time zone in timeZone, not as a TZ= prefix of start",fieldPath=".start"
// +kubebuilder:validation:XValidation:rule="!self.start.startsWith('@every')",message="@every is not a calendar start; use a cron expression",fieldPath=".start"
// +kubebuilder:validation:XValidation:rule="duration(self.duration) > duration('0s') && duration(self.duration) <= duration('168h')",message="duration must be positive and at most 168h",fieldPath=".duration"
type ScheduleWindow struct {
	// Name identifies the window in status and events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Start is when the window starts, as a five-field cron expression (minute hour
	// day-of-month month day-of-week, e.g. "0 8 * * 1-5") or @hourly, @daily, @weekly,
	// @monthly, @yearly, read in timeZone. A start that a daylight-saving change skips does not
	// happen that day; one in the repeated hour happens twice, as for a CronJob.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^(@(hourly|daily|midnight|weekly|monthly|yearly|annually)|\S+(\s+\S+){4})\s*$`
	Start string `json:"start"`
	// TimeZone is the IANA time zone start is read in, e.g. Europe/Berlin; it defaults to UTC.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// Duration is how long the window holds after each start, e.g. 9h30m, in elapsed time.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Duration metav1.Duration `json:"duration"`
	// MinReplicas is the floor while the window is active.
	// +kubebuilder:validation:Minimum=1
	MinReplicas int32 `json:"minReplicas"`
}

// PredictionStatus is the forecast's last state.
type PredictionStatus struct {
	// LeadTimeSeconds is the lead time in use: the spec's, or the observed one.
	// +optional
	LeadTimeSeconds int32 `json:"leadTimeSeconds,omitempty"`
	// Model is the forecasting method that fitted the history.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Model string `json:"model,omitempty"`
	// FittedTime is when the history was last fitted.
	// +optional
	FittedTime *metav1.Time `json:"fittedTime,omitempty"`
	// Replicas is what the forecast asks for at the lead horizon: the largest over the metrics.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Metrics are the forecasts of the metrics that have one, in the order of
	// status.currentMetrics; a metric whose forecast is off has none (PredictionActive says why).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=42
	// +optional
	Metrics []MetricForecast `json:"metrics,omitempty"`
}

// MetricForecast is one metric's forecast at the lead horizon. Type, Name, DescribedObject and
// Container name the metric as status.currentMetrics does: two metrics may share a name (cpu of
// two containers, one metric of two objects).
type MetricForecast struct {
	// Type is Resource, Custom, Object, External or ContainerResource.
	// +optional
	Type MetricSourceType `json:"type,omitempty"`
	// Name is the metric's name, as in status.currentMetrics.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// DescribedObject is the object an Object metric describes, as Kind/name.
	// +kubebuilder:validation:MaxLength=320
	// +optional
	DescribedObject string `json:"describedObject,omitempty"`
	// Container is the container a ContainerResource metric reads.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Container string `json:"container,omitempty"`
	// Value is the forecast load at now + lead time: the total over the target's pods for
	// per-pod metrics, the value for Object and External metrics.
	// +optional
	Value *resource.Quantity `json:"value,omitempty"`
	// Replicas is what the forecast of this metric asks for.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// WAPEPercent is the forecast's recent accuracy: the weighted absolute percentage error of
	// its forecasts against what happened, over the last day.
	// +optional
	WAPEPercent *int32 `json:"wapePercent,omitempty"`
}

// ScheduleStatus shows the schedule windows now and next.
type ScheduleStatus struct {
	// Floor is the effective floor: the highest minReplicas of the active windows, 0 when none.
	// +optional
	Floor int32 `json:"floor,omitempty"`
	// Active are the active windows, the highest floor first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Active []WindowOccurrence `json:"active,omitempty"`
	// Next is the window that starts next.
	// +optional
	Next *WindowOccurrence `json:"next,omitempty"`
}

// WindowOccurrence is one activation of a schedule window.
type WindowOccurrence struct {
	// Name is the window's name.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Start and End bound the activation.
	Start metav1.Time `json:"start"`
	// End is when the activation ends.
	End metav1.Time `json:"end"`
	// MinReplicas is the window's floor.
	MinReplicas int32 `json:"minReplicas"`
}

// LastDecision explains the last round's decision: each source's proposal, which won (or, for a
// round that held the replicas, why: "held: within tolerance", "held: stabilization window keeps 4",
// "held: FailedGetPodsMetric (see condition ScalingActive)"), and what stabilization, policies or
// limits then made of it.
type LastDecision struct {
	// Time is when the first round explained so ran: a round explained as the one before is not
	// written again.
	Time metav1.Time `json:"time"`
	// FromReplicas and ToReplicas are the replicas before and after (or, in dry-run and
	// ForecastOnly, what they would have been).
	FromReplicas int32 `json:"fromReplicas"`
	// ToReplicas is the decided replica count.
	ToReplicas int32 `json:"toReplicas"`
	// Proposals are each metric's, the forecast's and the active floor's proposals.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=44
	// +optional
	Proposals []DecisionProposal `json:"proposals,omitempty"`
	// Winner names the proposal that won, or, for a round that held the replicas, why it held.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Winner string `json:"winner,omitempty"`
	// Changes say what stabilization, policies or limits changed, e.g. "ScaleUpLimit: 10 to 4".
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	Changes []string `json:"changes,omitempty"`
}

// DecisionProposal is one candidate replica count of a round.
type DecisionProposal struct {
	// Source is Metric, Forecast or Schedule.
	// +kubebuilder:validation:Enum=Metric;Forecast;Schedule
	Source string `json:"source"`
	// Name is the metric's description or the window's name.
	// +kubebuilder:validation:MaxLength=512
	Name string `json:"name"`
	// Replicas is the proposed replica count.
	Replicas int32 `json:"replicas"`
}
