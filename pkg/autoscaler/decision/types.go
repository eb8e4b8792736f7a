package decision

import (
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// ConditionType is the type of an autoscaler condition, as in autoscaling/v2.
type ConditionType string

const (
	// AbleToScale tells whether the autoscaler can fetch and update the scale target.
	AbleToScale ConditionType = "AbleToScale"
	// ScalingActive tells whether the autoscaler can compute a replica count from its metrics.
	ScalingActive ConditionType = "ScalingActive"
	// ScalingLimited tells whether the desired replica count was capped by limits.
	ScalingLimited ConditionType = "ScalingLimited"
)

// Reasons of the ScalingActive condition; the ScalingLimited and AbleToScale reasons are normalize's.
const (
	// ReasonValidMetricFound means a replica count was computed from at least one metric.
	ReasonValidMetricFound = "ValidMetricFound"
	// ReasonScalingDisabled means the target has zero replicas, which disables autoscaling.
	ReasonScalingDisabled = "ScalingDisabled"
	// ReasonFailedGetResourceMetric means a resource (cpu, memory) metric could not be computed.
	ReasonFailedGetResourceMetric = "FailedGetResourceMetric"
	// ReasonFailedGetPodsMetric means a pods (custom, per-pod) metric could not be computed.
	ReasonFailedGetPodsMetric = "FailedGetPodsMetric"
	// ReasonFailedGetExternalMetric means an external metric could not be computed.
	ReasonFailedGetExternalMetric = "FailedGetExternalMetric"
	// ReasonFailedGetObjectMetric means an object metric could not be computed.
	ReasonFailedGetObjectMetric = "FailedGetObjectMetric"
	// ReasonFailedGetContainerResourceMetric means a container resource metric could not be computed.
	ReasonFailedGetContainerResourceMetric = "FailedGetContainerResourceMetric"
	// ReasonInvalidMetricSourceType means a metric has an unknown kind, or there are no metrics.
	ReasonInvalidMetricSourceType = "InvalidMetricSourceType"
)

// Condition is one status condition as plain values. Decide returns only the conditions this round
// determined; the controller keeps the others as they were.
type Condition struct {
	// Type is AbleToScale, ScalingActive or ScalingLimited.
	Type ConditionType
	// Status is true for ConditionTrue.
	Status bool
	// Reason is a CamelCase reason, as upstream's.
	Reason string
	// Message is a human-readable explanation.
	Message string
}

// MetricKind is the source type of a metric, as in autoscaling/v2.
type MetricKind string

const (
	// ResourceMetric is a pod resource (cpu, memory) from metrics.k8s.io.
	ResourceMetric MetricKind = "Resource"
	// PodsMetric is a per-pod custom metric from custom.metrics.k8s.io.
	PodsMetric MetricKind = "Pods"
	// ExternalMetric is a metric not tied to the pods, from external.metrics.k8s.io.
	ExternalMetric MetricKind = "External"
	// ObjectMetric is a metric of one object, from custom.metrics.k8s.io.
	ObjectMetric MetricKind = "Object"
	// ContainerResourceMetric is a resource (cpu, memory) of one container of the pods, from
	// metrics.k8s.io.
	ContainerResourceMetric MetricKind = "ContainerResource"
)

// Metric is one metric spec of the autoscaler with the data fetched for it this round.
type Metric struct {
	// Kind is the metric's source type.
	Kind MetricKind
	// Name is the metric name; for a resource metric, the resource name.
	Name string
	// Target is the metric's target; for a resource metric Target.Resource must be set, and for a
	// ContainerResource metric Target.Container too.
	Target replicas.Target
	// Samples are the per-pod samples of Resource, Pods and ContainerResource metrics, keyed by pod name.
	Samples map[string]replicas.Sample
	// Values are the series values of an External metric, or the one value of an Object metric,
	// in milli-units.
	Values []int64
	// DescribedKind and DescribedName name the object an Object metric describes, e.g. Service web.
	DescribedKind, DescribedName string
	// FetchErr is the error of fetching the metric, if any; Samples and Values are then unused.
	FetchErr error
	// Fallback is an External metric's fallback; nil without one.
	Fallback *Fallback
	// FailingSince is when the metric's current run of failed reads began, as the rounds before
	// this one left it (see FailingSince); zero when it was read at the last round.
	FailingSince time.Time
}

// Config holds the flag-configured settings of the algorithm.
type Config struct {
	// Replicas holds the default tolerances and the cpu readiness settings.
	Replicas replicas.Config
	// DownscaleStabilizationWindow is the default scale-down stabilization window.
	DownscaleStabilizationWindow time.Duration
}

// DefaultConfig returns upstream's default settings.
func DefaultConfig() Config {
	return Config{Replicas: replicas.DefaultConfig(), DownscaleStabilizationWindow: normalize.DefaultDownscaleStabilizationWindow}
}

// Input is everything one round's decision needs.
type Input struct {
	// SpecReplicas is the scale target's spec.replicas, the current replica count.
	SpecReplicas int32
	// StatusReplicas is the scale target's status.replicas (used by Object and External AverageValue targets).
	StatusReplicas int32
	// MinReplicas and MaxReplicas bound the replicas (MinReplicas already defaulted).
	MinReplicas, MaxReplicas int32
	// Pods are the pods selected by the scale target's selector.
	Pods []replicas.Pod
	// Metrics are the autoscaler's metrics with this round's data.
	Metrics []Metric
	// Behavior is the autoscaler's scaling behavior; nil selects the legacy normalization.
	Behavior *normalize.Behavior
	// History is the state persisted from previous rounds.
	History normalize.History
	// Forecast is the forecast's input (spec.prediction); nil when prediction is off.
	Forecast *Forecast
	// Floor is the active schedule floor (spec.schedules); it raises MinReplicas before the
	// algorithm runs.
	Floor Floor
	// ScaledToZero is true while the autoscaler holds the target at zero (its ScaledToZero
	// condition is True): a target at zero is then scaled back up when a metric asks for it,
	// where one a person set to zero stays disabled.
	ScaledToZero bool
	// Config holds the flag-configured settings.
	Config Config
	// Now is the time of this round.
	Now time.Time
}

// MetricStatus is the outcome of one metric, enough for status.currentMetrics.
type MetricStatus struct {
	// Kind and Name identify the metric.
	Kind MetricKind
	// Name is the metric name (the resource name for a resource metric).
	Name string
	// Description names the metric in reasons and messages, as upstream (e.g. "pods metric qps").
	Description string
	// DescribedObject is "Kind/name" of the object an Object metric describes, e.g. Service/web.
	DescribedObject string
	// Target is the metric's target; its Type tells which Result fields are meaningful.
	Target replicas.Target
	// Result is the proposal with the current average value, utilization or total.
	Result replicas.Result
	// Err is why the metric could not be computed; nil when Result is valid.
	Err error
	// FailureReason is the ScalingActive reason for Err (e.g. FailedGetPodsMetric).
	FailureReason string
	// Fallback is the metric's fallback, nil without one. FailingSince is when its current run
	// of failed reads began (zero while it is read), and FallbackActive whether it has failed for
	// long enough that it proposes the fallback's replicas (Result.Replicas), Err still set.
	Fallback       *Fallback
	FailingSince   time.Time
	FallbackActive bool
}

// Decision is the outcome of one round.
type Decision struct {
	// DesiredReplicas is the replica count to apply (equal to SpecReplicas when Rescale is false).
	DesiredReplicas int32
	// Rescale is true when the scale target must be updated to DesiredReplicas.
	Rescale bool
	// Metric describes the metric whose proposal won, empty on fast paths and failures.
	Metric string
	// Reason explains a rescale for events, as upstream's rescaleReason.
	Reason string
	// Statuses has one entry per input metric, in order.
	Statuses []MetricStatus
	// Conditions are the conditions this round determined.
	Conditions []Condition
	// History is the history to persist; after a successful rescale the controller adds the scale
	// event with normalize.RecordScaleEvent.
	History normalize.History
	// MetricsErr reports metrics that failed, also when the others still drove a decision.
	MetricsErr error
	// Explanation records the proposals, the winner and what normalization changed, for the
	// last decision in status; empty on fast paths and metric failures.
	Explanation Explanation
	// HoldsAtZero is true when the rescale scales the target to zero with minReplicas 0 and an
	// Object or External metric to scale it back up (see ScaledToZeroCondition).
	HoldsAtZero bool
}

// MetricID names one metric of an autoscaler, as status.currentMetrics names it: its kind and
// name, the container of a ContainerResource metric and the object of an Object metric. Two
// metrics may share a name (cpu of two containers, one metric of two objects) but not an ID, so
// every list about the metrics (statuses, forecasts, proposals) is joined by ID, never by index:
// a round that returns early has a shorter list.
type MetricID struct {
	Kind            MetricKind
	Name            string
	Container       string
	DescribedObject string
}

// ID is m's identity.
func (m Metric) ID() MetricID {
	id := MetricID{Kind: m.Kind, Name: m.Name}
	switch m.Kind {
	case ContainerResourceMetric:
		id.Container = m.Target.Container
	case ObjectMetric:
		id.DescribedObject = m.DescribedKind + "/" + m.DescribedName
	}
	return id
}

// ID is the identity of the metric s is the status of, the same as its Metric's.
func (s MetricStatus) ID() MetricID {
	id := MetricID{Kind: s.Kind, Name: s.Name, DescribedObject: s.DescribedObject}
	if s.Kind == ContainerResourceMetric {
		id.Container = s.Target.Container
	}
	return id
}
