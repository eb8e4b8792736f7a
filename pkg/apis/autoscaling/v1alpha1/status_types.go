package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of the history kept in status. The longest stabilization window
// is 3600 s and the longest policy period 1800 s; with at most one
// recommendation and one scale event per sync, these bounds hold the whole
// window for sync periods down to 4 s (3600/4 = 900, 1800/4 = 450). The
// controller prunes recommendations older than the longest window in use,
// lets a new scale event take the place of one older than its direction's
// longest period, and then, if still over a bound, drops the first
// entries. At the bounds the history costs about 120 KiB of the object.
const (
	// MaxRecommendations bounds status.recommendations.
	MaxRecommendations = 1000
	// MaxScaleEvents bounds each of status.scaleEvents.scaleUp and .scaleDown.
	MaxScaleEvents = 500
)

// Condition types of a PodAutoscaler, as in autoscaling/v2.
const (
	// ConditionAbleToScale says whether the scale target could be read and updated.
	ConditionAbleToScale = "AbleToScale"
	// ConditionScalingActive says whether the metrics could be read and a
	// replica count computed.
	ConditionScalingActive = "ScalingActive"
	// ConditionScalingLimited says whether the computed replica count was
	// clamped by minReplicas, maxReplicas or a scaling policy.
	ConditionScalingLimited = "ScalingLimited"
	// ConditionScaledToZero is True while the autoscaler holds the target at
	// zero replicas, which it scales back up when an Object or External
	// metric asks for it; False (NotScaledToZero) once a rescale left it
	// above zero. A target at zero without it True was set to zero by a
	// person and is not scaled. Set after every successful rescale.
	ConditionScaledToZero = "ScaledToZero"
)

// Condition types podpilot adds to autoscaling/v2's.
const (
	// ConditionSelectorOverlap says whether pods that match the scale
	// target's selector but are not the target's own (another workload's,
	// or nobody's) were left out of the computation.
	ConditionSelectorOverlap = "SelectorOverlap"
)

// ConditionExternalMetricFallbackActive is True while at least one External metric proposes its
// fallback replicas (spec.externalMetrics[].fallback) and False while none does, as KEP-5679's
// HPA condition of that name; a PodAutoscaler without a fallback has no such condition.
const ConditionExternalMetricFallbackActive = "ExternalMetricFallbackActive"

// PodAutoscalerStatus is the last observed state of a PodAutoscaler,
// including the history its stabilization windows and scaling policies
// need, so that a restart or a change of leader keeps it.
type PodAutoscalerStatus struct {
	// ObservedGeneration is the spec generation this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Reference names the scale target for kubectl get, e.g. Deployment/vg1-vanguard.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Reference string `json:"reference,omitempty"`
	// Mode is Active, or DryRun when spec.dryRun is set, for kubectl get.
	// +optional
	Mode PodAutoscalerMode `json:"mode,omitempty"`
	// Targets shows each metric's current and target value for kubectl
	// get, e.g. "1500/2k, 30%/50%, 120Mi/256Mi".
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Targets string `json:"targets,omitempty"`
	// CurrentReplicas is the scale target's replica count when last observed.
	// +optional
	CurrentReplicas int32 `json:"currentReplicas"`
	// DesiredReplicas is the replica count the autoscaler last decided on.
	// +optional
	DesiredReplicas int32 `json:"desiredReplicas"`
	// LastScaleTime is when the autoscaler last changed the replica count.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// CurrentMetrics is the last read value of each metric in the spec, in
	// the order customMetrics, resourceMetrics, objectMetrics,
	// externalMetrics, containerResourceMetrics. Its bound is the sum of
	// the bounds of those lists.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=42
	// +optional
	CurrentMetrics []MetricStatus `json:"currentMetrics,omitempty"`
	// Conditions are AbleToScale, ScalingActive and ScalingLimited, as in
	// autoscaling/v2, ScaledToZero, SelectorOverlap, PredictionActive, ScheduleActive and
	// ExternalMetricFallbackActive.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Recommendations are the replica counts recommended at past syncs,
	// within the longest stabilization window, oldest first, as runs of
	// equal consecutive recommendations: each entry but the newest is dated
	// the last sync that made it; the newest is still being made and is
	// dated the sync that first made it. At most MaxRecommendations entries.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	Recommendations []Recommendation `json:"recommendations,omitempty"`
	// ScaleEvents are the past changes of the replica count that the
	// scaling policies of both directions count against.
	// +optional
	ScaleEvents *ScaleEvents `json:"scaleEvents,omitempty"`
	// Prediction is the forecast's last state, when spec.prediction is on (prediction_types.go).
	// +optional
	Prediction *PredictionStatus `json:"prediction,omitempty"`
	// Schedules shows the active and the next schedule window, when spec.schedules is set.
	// +optional
	Schedules *ScheduleStatus `json:"schedules,omitempty"`
	// LastDecision explains the last round's decision: a change of the replicas (or what it would
	// have been), or why the round held them. A round explained as the one before keeps that one's time.
	// +optional
	LastDecision *LastDecision `json:"lastDecision,omitempty"`
}

// PodAutoscalerMode says whether a PodAutoscaler writes its target's scale.
// +kubebuilder:validation:Enum=Active;DryRun
type PodAutoscalerMode string

const (
	// ActiveMode PodAutoscalers write their target's scale.
	ActiveMode PodAutoscalerMode = "Active"
	// DryRunMode PodAutoscalers only report what they would write.
	DryRunMode PodAutoscalerMode = "DryRun"
)

// MetricSourceType says where a metric comes from.
// +kubebuilder:validation:Enum=Resource;Custom;Object;External;ContainerResource
type MetricSourceType string

const (
	// ResourceMetricSourceType is a cpu or memory metric from metrics.k8s.io.
	ResourceMetricSourceType MetricSourceType = "Resource"
	// CustomMetricSourceType is a per-pod metric from custom.metrics.k8s.io.
	CustomMetricSourceType MetricSourceType = "Custom"
	// ObjectMetricSourceType is a metric of one object from custom.metrics.k8s.io.
	ObjectMetricSourceType MetricSourceType = "Object"
	// ExternalMetricSourceType is a metric from external.metrics.k8s.io.
	ExternalMetricSourceType MetricSourceType = "External"
	// ContainerResourceMetricSourceType is a cpu or memory metric of one
	// container of the pods from metrics.k8s.io.
	ContainerResourceMetricSourceType MetricSourceType = "ContainerResource"
)

// MetricStatus is the last read value of one metric, a flat form of
// autoscaling/v2 MetricStatus.
type MetricStatus struct {
	// Type is Resource, Custom, Object, External or ContainerResource.
	Type MetricSourceType `json:"type"`
	// Name is the resource name (cpu, memory) for Resource and
	// ContainerResource metrics, the metric name otherwise.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// DescribedObject is the object an Object metric describes, as
	// Kind/name, e.g. Service/web.
	// +kubebuilder:validation:MaxLength=320
	// +optional
	DescribedObject string `json:"describedObject,omitempty"`
	// Container is the container a ContainerResource metric reads.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Container string `json:"container,omitempty"`
	// Value is the current value of an Object or External metric (for an
	// External metric, the sum of its series).
	// +optional
	Value *resource.Quantity `json:"value,omitempty"`
	// AverageValue is the current average value per pod; for Object and
	// External metrics, the value divided by the current pods (0 at 0 pods),
	// set for AverageValue targets only.
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
	// AverageUtilization is the current average usage in percent of the
	// pods' (or the container's) requests; set for Utilization targets only.
	// +optional
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	// FallbackStatus is Normal or Fallback for an External metric with a fallback
	// (spec.externalMetrics[].fallback), as KEP-5679's fallbackStatus: Fallback while the metric
	// proposes its fallback replicas.
	// +optional
	FallbackStatus FallbackStatus `json:"fallbackStatus,omitempty"`
	// FirstFailureTime is when the metric's current run of failed reads began, for an External
	// metric with a fallback, as KEP-5679's firstFailureTime; unset once it is read again. A new
	// leader counts the failure from it.
	// +optional
	FirstFailureTime *metav1.Time `json:"firstFailureTime,omitempty"`
}

// FallbackStatus says whether an External metric proposes its fallback replicas.
// +kubebuilder:validation:Enum=Normal;Fallback
type FallbackStatus string

const (
	// FallbackNormal means the metric is read, or has not failed long enough for its fallback.
	FallbackNormal FallbackStatus = "Normal"
	// FallbackActive means the metric has failed for failureDurationSeconds and proposes its
	// fallback replicas.
	FallbackActive FallbackStatus = "Fallback"
)

// Recommendation is a replica count recommended at one or more consecutive syncs.
type Recommendation struct {
	// Replicas is the recommended replica count.
	Replicas int32 `json:"replicas"`
	// Timestamp is when the recommendation was last made; for the newest
	// entry, when it was first made.
	Timestamp metav1.Time `json:"timestamp"`
}

// ScaleEvents are the past replica changes in each direction.
type ScaleEvents struct {
	// ScaleUp are the past scale-ups, as upstream keeps them: a new one takes
	// the place of the last one older than the longest scale-up period, or
	// is appended. At most MaxScaleEvents entries.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	// +optional
	ScaleUp []ScaleEvent `json:"scaleUp,omitempty"`
	// ScaleDown are the past scale-downs, kept as ScaleUp. At most MaxScaleEvents entries.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	// +optional
	ScaleDown []ScaleEvent `json:"scaleDown,omitempty"`
}

// ScaleEvent is one change of the replica count.
type ScaleEvent struct {
	// ReplicaChange is the number of replicas added or removed; never negative.
	// +kubebuilder:validation:Minimum=0
	ReplicaChange int32 `json:"replicaChange"`
	// Timestamp is when the change was made.
	Timestamp metav1.Time `json:"timestamp"`
}
