package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodAutoscaler scales the pods of one Deployment or StatefulSet between
// minReplicas and maxReplicas so that each metric stays near its target.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=ppa,categories=podpilot
// +kubebuilder:printcolumn:name="Reference",type=string,JSONPath=`.status.reference`,description="The workload being scaled."
// +kubebuilder:printcolumn:name="Targets",type=string,JSONPath=`.status.targets`,description="Current and target value of each metric."
// +kubebuilder:printcolumn:name="MinPods",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MaxPods",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.status.mode`,description="Active, or DryRun when the PodAutoscaler only reports what it would do."
// +kubebuilder:printcolumn:name="Forecast",type=integer,JSONPath=`.status.prediction.replicas`,description="The replicas the forecast asks for one lead time ahead (spec.prediction)."
// +kubebuilder:printcolumn:name="Floor",type=integer,JSONPath=`.status.schedules.floor`,priority=1,description="The floor of the active schedule windows (spec.schedules)."
// +kubebuilder:printcolumn:name="Fallback",type=string,JSONPath=`.status.conditions[?(@.type=="ExternalMetricFallbackActive")].status`,priority=1,description="True while an External metric proposes its fallback replicas (spec.externalMetrics[].fallback)."
// +kubebuilder:printcolumn:name="SyncPeriod",type=integer,JSONPath=`.spec.behavior.syncPeriodSeconds`,priority=1,description="The period of this PodAutoscaler's rounds, when not the controller's (spec.behavior.syncPeriodSeconds)."
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behaviour of the autoscaler.
	Spec PodAutoscalerSpec `json:"spec"`
	// Status is the last observed state of the autoscaler, written by the controller.
	// +optional
	Status PodAutoscalerStatus `json:"status,omitempty"`
}

// PodAutoscalerList is a list of PodAutoscalers.
//
// +kubebuilder:object:root=true
type PodAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the PodAutoscalers in the list.
	Items []PodAutoscaler `json:"items"`
}

// PodAutoscalerSpec names the workload to scale, its replica bounds, the
// metrics to follow and, optionally, how fast to scale.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="maxReplicas must be >= minReplicas",fieldPath=".maxReplicas"
// +kubebuilder:validation:XValidation:rule="(has(self.resourceMetrics) && size(self.resourceMetrics) > 0) || (has(self.customMetrics) && size(self.customMetrics) > 0) || (has(self.objectMetrics) && size(self.objectMetrics) > 0) || (has(self.externalMetrics) && size(self.externalMetrics) > 0) || (has(self.containerResourceMetrics) && size(self.containerResourceMetrics) > 0)",message="at least one metric must be set in resourceMetrics, customMetrics, objectMetrics, externalMetrics or containerResourceMetrics"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas > 0 || (has(self.objectMetrics) && size(self.objectMetrics) > 0) || (has(self.externalMetrics) && size(self.externalMetrics) > 0)",message="minReplicas 0 (scale to zero) needs at least one metric in objectMetrics or externalMetrics",fieldPath=".minReplicas"
type PodAutoscalerSpec struct {
	// ScaleTargetKind is the kind of the workload to scale: deployment or
	// statefulset, matched case-insensitively (Deployment works too).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii() in ['deployment', 'statefulset']",message="scaleTargetKind must be deployment or statefulset (case-insensitive)"
	ScaleTargetKind ScaleTargetKind `json:"scaleTargetKind"`
	// ScaleTargetName is the name of the workload in the PodAutoscaler's
	// namespace. As autoscaling/v2's scaleTargetRef.name, it is a path
	// segment: not . or .., and without / or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="scaleTargetName may not be '.' or '..' and may not contain '/' or '%'"
	ScaleTargetName string `json:"scaleTargetName"`
	// MinReplicas is the lower bound of the replica count; it defaults to 1.
	// It may be 0 when at least one Object or External metric is set: the
	// target is then scaled to zero when every metric proposes zero, and
	// back up when one asks for replicas (see the ScaledToZero condition).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the upper bound of the replica count; it must be >= minReplicas.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`
	// ResourceMetrics are targets on the pods' cpu or memory, read from
	// metrics.k8s.io. Each resource appears at most once.
	// +listType=map
	// +listMapKey=resourceName
	// +kubebuilder:validation:MaxItems=2
	// +optional
	ResourceMetrics []ResourceMetricSpec `json:"resourceMetrics,omitempty"`
	// CustomMetrics are per-pod average targets on metrics read from
	// custom.metrics.k8s.io. Each metric name appears at most once. The
	// bound of 10 keeps the CEL cost of the averageValue rule in budget.
	// +listType=map
	// +listMapKey=metricName
	// +kubebuilder:validation:MaxItems=10
	// +optional
	CustomMetrics []CustomMetricSpec `json:"customMetrics,omitempty"`

	// The autoscaling/v2 metric kinds beyond the seed's (see kinds_types.go).

	// ObjectMetrics are targets on a metric describing one object in the
	// PodAutoscaler's namespace (e.g. a Service's request rate), read from
	// custom.metrics.k8s.io, as autoscaling/v2 Object metrics.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ObjectMetrics []ObjectMetricSpec `json:"objectMetrics,omitempty"`
	// ExternalMetrics are targets on a metric not tied to any object of the
	// cluster (e.g. a queue length), read from external.metrics.k8s.io, as
	// autoscaling/v2 External metrics.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ExternalMetrics []ExternalMetricSpec `json:"externalMetrics,omitempty"`
	// ContainerResourceMetrics are targets on a resource (cpu or memory) of
	// one container of each pod, read from metrics.k8s.io, as autoscaling/v2
	// ContainerResource metrics. Each container and resource appears at most once.
	// +listType=map
	// +listMapKey=container
	// +listMapKey=resourceName
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ContainerResourceMetrics []ContainerResourceMetricSpec `json:"containerResourceMetrics,omitempty"`
	// Behavior configures scaling up and down separately, as in
	// autoscaling/v2; fields left unset take the autoscaling/v2 defaults.
	// When behavior is unset, the HPA's classic normalization applies: the
	// downscale stabilization window of --autoscaler-downscale-stabilization
	// and a scale-up limit of max(2 x current replicas, 4) per sync.
	// +optional
	Behavior *PodAutoscalerBehavior `json:"behavior,omitempty"`
	// DryRun computes the PodAutoscaler every round as usual but never
	// writes the target's scale: status, conditions and events say what it
	// would do, given the replicas the target really has. A dry-run
	// PodAutoscaler may share its target with another autoscaler.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// Prediction forecasts each metric's load from its Prometheus history and scales out ahead
	// of it (see prediction_types.go). Off when unset.
	// +optional
	Prediction *PredictionSpec `json:"prediction,omitempty"`
	// Schedules are floors on a calendar: while a window is active, the replicas are at least its
	// minReplicas (the highest active floor holds).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Schedules []ScheduleWindow `json:"schedules,omitempty"`
}

// ScaleTargetKind is the kind of workload a PodAutoscaler scales. It is
// matched case-insensitively; Canonical returns the lower-case form.
type ScaleTargetKind string

const (
	// ScaleTargetDeployment scales an apps/v1 Deployment.
	ScaleTargetDeployment ScaleTargetKind = "deployment"
	// ScaleTargetStatefulSet scales an apps/v1 StatefulSet.
	ScaleTargetStatefulSet ScaleTargetKind = "statefulset"
)

// MetricTargetType says how a resource metric's target is expressed.
// +kubebuilder:validation:Enum=Utilization;AverageValue
type MetricTargetType string

const (
	// UtilizationMetricType targets the average usage as a percentage of the pods' requests.
	UtilizationMetricType MetricTargetType = "Utilization"
	// AverageValueMetricType targets the average usage per pod as a quantity.
	AverageValueMetricType MetricTargetType = "AverageValue"
)

// ResourceMetricSpec is a target on a resource (cpu or memory) of the pods,
// summed over each pod's containers. Utilization targets need
// averageUtilization; AverageValue targets need averageValue.
//
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Utilization' || has(self.averageUtilization)",message="averageUtilization is required when targetType is Utilization",fieldPath=".averageUtilization"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Utilization' || !has(self.averageValue)",message="averageValue must not be set when targetType is Utilization",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || has(self.averageValue)",message="averageValue is required when targetType is AverageValue",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || !has(self.averageUtilization)",message="averageUtilization must not be set when targetType is AverageValue",fieldPath=".averageUtilization"
type ResourceMetricSpec struct {
	// ResourceName is the resource: cpu or memory.
	// +kubebuilder:validation:Enum=cpu;memory
	ResourceName corev1.ResourceName `json:"resourceName"`
	// TargetType is Utilization or AverageValue.
	TargetType MetricTargetType `json:"targetType"`
	// AverageUtilization is the target average usage in percent of the
	// pods' requests; set only for Utilization. It may exceed 100.
	// +kubebuilder:validation:Minimum=1
	// +optional
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	// AverageValue is the target average usage per pod; set only for
	// AverageValue. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be positive"
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
}

// CustomMetricSpec is a per-pod average target on a custom metric.
// Custom metrics have no utilization target.
type CustomMetricSpec struct {
	// MetricName is the name of the metric in custom.metrics.k8s.io. As
	// in autoscaling/v2, it is a path segment: not . or .., and without /
	// or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="metricName may not be '.' or '..' and may not contain '/' or '%'"
	MetricName string `json:"metricName"`
	// AverageValue is the target average value per pod. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be positive"
	AverageValue resource.Quantity `json:"averageValue"`
	// Selector narrows the metric by its labels; when unset, the metric
	// is read with the pods' selector alone. Bounded as MetricSelector says
	// (podpilot's bounds; autoscaling/v2 has none).
	// +optional
	Selector *MetricSelector `json:"selector,omitempty"`
}

// PodAutoscalerBehavior configures scaling up and down, as
// autoscaling/v2 HorizontalPodAutoscalerBehavior does.
type PodAutoscalerBehavior struct {
	// ScaleUp is the rules for scaling up. When unset: no stabilization
	// window, and per 15 s the larger of +100% and +4 pods.
	// +optional
	ScaleUp *ScalingRules `json:"scaleUp,omitempty"`
	// ScaleDown is the rules for scaling down. When unset: a 300 s
	// stabilization window, and per 15 s up to -100%.
	// +optional
	ScaleDown *ScalingRules `json:"scaleDown,omitempty"`
	// SyncPeriodSeconds is the period of this PodAutoscaler's rounds, as autoscaling/v2's
	// behavior.syncPeriodSeconds will be (KEP-6003): 1 to 3600. When unset, the controller's
	// --autoscaler-sync-period applies. As upstream, setting it (like any behavior field) selects
	// the behavior's defaults over the classic normalization.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	SyncPeriodSeconds *int32 `json:"syncPeriodSeconds,omitempty"`
}

// ScalingRules configures one direction of scaling, as autoscaling/v2
// HPAScalingRules does. Unset fields take that direction's defaults.
type ScalingRules struct {
	// StabilizationWindowSeconds is how far back recommendations are
	// considered: the highest one over the window when scaling down, the
	// lowest when scaling up.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +optional
	StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds,omitempty"`
	// SelectPolicy picks among the policies: Max (the default) allows the
	// largest change, Min the smallest, and Disabled forbids this direction.
	// +optional
	SelectPolicy *ScalingPolicySelect `json:"selectPolicy,omitempty"`
	// Policies limit how much the replica count may change per period.
	// When set, at least one, as in autoscaling/v2; leave it unset for
	// the direction's default policies.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Policies []ScalingPolicy `json:"policies,omitempty"`
	// Tolerance is the relative distance from the target, e.g. 0.1 for
	// 10%, within which no scaling happens. It must be >= 0; when unset
	// the controller's default tolerance applies.
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isLessThan(quantity('0'))",message="tolerance must be >= 0"
	// +optional
	Tolerance *resource.Quantity `json:"tolerance,omitempty"`
}

// ScalingPolicySelect picks which scaling policy applies.
// +kubebuilder:validation:Enum=Max;Min;Disabled
type ScalingPolicySelect string

const (
	// MaxChangePolicySelect allows the largest change any policy allows.
	MaxChangePolicySelect ScalingPolicySelect = "Max"
	// MinChangePolicySelect allows the smallest change any policy allows.
	MinChangePolicySelect ScalingPolicySelect = "Min"
	// DisabledPolicySelect forbids scaling in this direction.
	DisabledPolicySelect ScalingPolicySelect = "Disabled"
)

// ScalingPolicyType is the unit of a scaling policy's value.
// +kubebuilder:validation:Enum=Pods;Percent
type ScalingPolicyType string

const (
	// PodsScalingPolicy limits the change to an absolute number of pods.
	PodsScalingPolicy ScalingPolicyType = "Pods"
	// PercentScalingPolicy limits the change to a percentage of the current replicas.
	PercentScalingPolicy ScalingPolicyType = "Percent"
)

// ScalingPolicy limits the change of the replica count within a period.
type ScalingPolicy struct {
	// Type is Pods or Percent.
	Type ScalingPolicyType `json:"type"`
	// Value is the allowed change, in pods or percent; it must be > 0.
	// +kubebuilder:validation:Minimum=1
	Value int32 `json:"value"`
	// PeriodSeconds is the window the change is measured over, 1 to 1800.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1800
	PeriodSeconds int32 `json:"periodSeconds"`
}
