package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ValueTargetType says how an Object or External metric's target is expressed.
// +kubebuilder:validation:Enum=Value;AverageValue
type ValueTargetType string

const (
	// ValueTarget targets the metric's value itself (for an External metric,
	// the sum of its series).
	ValueTarget ValueTargetType = "Value"
	// AverageValueTarget targets the metric's value divided by the current
	// number of pods.
	AverageValueTarget ValueTargetType = "AverageValue"
)

// ObjectMetricSpec is a target on a metric describing one object in the
// PodAutoscaler's namespace, as autoscaling/v2 ObjectMetricSource: the same
// value custom.metrics.k8s.io serves at
// namespaces/<namespace>/<resource>/<name>/<metricName>. Value targets need
// value; AverageValue targets need averageValue.
//
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Value' || has(self.value)",message="value is required when targetType is Value",fieldPath=".value"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Value' || !has(self.averageValue)",message="averageValue must not be set when targetType is Value",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || has(self.averageValue)",message="averageValue is required when targetType is AverageValue",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || !has(self.value)",message="value must not be set when targetType is AverageValue",fieldPath=".value"
type ObjectMetricSpec struct {
	// DescribedObject is the object the metric describes, e.g. a Service.
	DescribedObject MetricObjectReference `json:"describedObject"`
	// MetricName is the name of the metric in custom.metrics.k8s.io, a
	// path segment as in autoscaling/v2: not . or .., and without / or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="metricName may not be '.' or '..' and may not contain '/' or '%'"
	MetricName string `json:"metricName"`
	// Selector narrows the metric by its labels; when unset, every series of
	// the metric for the object counts. Bounded as MetricSelector says
	// (podpilot's bounds; autoscaling/v2 has none).
	// +optional
	Selector *MetricSelector `json:"selector,omitempty"`
	// TargetType is Value (the object's value against value) or AverageValue
	// (the object's value divided by the current pods against averageValue).
	TargetType ValueTargetType `json:"targetType"`
	// Value is the target value of the metric; set only for Value. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="value must be positive"
	// +optional
	Value *resource.Quantity `json:"value,omitempty"`
	// AverageValue is the target value per pod; set only for AverageValue. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be positive"
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
}

// MetricObjectReference names an object in the PodAutoscaler's namespace, as
// autoscaling/v2 CrossVersionObjectReference.
type MetricObjectReference struct {
	// APIVersion is the object's API version, e.g. v1 or apps/v1; only its
	// group is used. When unset, the core group. At most one /.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.substring(self.indexOf('/') + 1).contains('/')",message="apiVersion must be a version or group/version, with at most one '/'"
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is the object's kind, e.g. Service; a path segment as in
	// autoscaling/v2: not . or .., and without / or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="kind may not be '.' or '..' and may not contain '/' or '%'"
	Kind string `json:"kind"`
	// Name is the object's name; a path segment as in autoscaling/v2: not .
	// or .., and without / or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="name may not be '.' or '..' and may not contain '/' or '%'"
	Name string `json:"name"`
}

// ExternalMetricSpec is a target on a metric not tied to any object of the
// cluster, as autoscaling/v2 ExternalMetricSource, read from
// external.metrics.k8s.io in the PodAutoscaler's namespace. The values of
// all its series are summed. Value targets need value; AverageValue targets
// need averageValue.
//
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Value' || has(self.value)",message="value is required when targetType is Value",fieldPath=".value"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Value' || !has(self.averageValue)",message="averageValue must not be set when targetType is Value",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || has(self.averageValue)",message="averageValue is required when targetType is AverageValue",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || !has(self.value)",message="value must not be set when targetType is AverageValue",fieldPath=".value"
type ExternalMetricSpec struct {
	// MetricName is the name of the metric in external.metrics.k8s.io, a
	// path segment as in autoscaling/v2: not . or .., and without / or %.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.contains('/') && !self.contains('%')",message="metricName may not be '.' or '..' and may not contain '/' or '%'"
	MetricName string `json:"metricName"`
	// Selector narrows the metric by its labels; when unset, every series
	// counts. Bounded as MetricSelector says (podpilot's
	// bounds; autoscaling/v2 has none).
	// +optional
	Selector *MetricSelector `json:"selector,omitempty"`
	// TargetType is Value (the sum of the series against value) or
	// AverageValue (the sum divided by the current pods against averageValue).
	TargetType ValueTargetType `json:"targetType"`
	// Value is the target sum of the metric; set only for Value. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="value must be positive"
	// +optional
	Value *resource.Quantity `json:"value,omitempty"`
	// AverageValue is the target sum per pod; set only for AverageValue. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be positive"
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
	// Fallback is what the metric proposes once it has failed to be read for a while, as
	// autoscaling/v2's ExternalMetricSource.fallback will (KEP-5679). When unset, a metric that
	// cannot be read proposes nothing, as today.
	// +optional
	Fallback *ExternalMetricFallback `json:"fallback,omitempty"`
}

// ExternalMetricFallback is the fallback of an External metric, with the names and bounds of
// KEP-5679's ExternalMetricFallback: once the metric has failed to be read continuously for
// failureDurationSeconds, it proposes replicas, which goes through the behavior and the
// min/max limits as any metric's proposal does; the first successful read ends it.
type ExternalMetricFallback struct {
	// FailureDurationSeconds is how long the metric must have failed continuously, from its first
	// consecutive failure, before the fallback applies. At least 180, the default.
	// +kubebuilder:default=180
	// +kubebuilder:validation:Minimum=180
	// +optional
	FailureDurationSeconds *int64 `json:"failureDurationSeconds,omitempty"`
	// Replicas is the replica count the metric proposes while the fallback applies; at least 1.
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas"`
}

// DefaultFailureDurationSeconds is ExternalMetricFallback.failureDurationSeconds when unset, and
// its minimum (KEP-5679).
const DefaultFailureDurationSeconds = 180

// ContainerResourceMetricSpec is a target on a resource (cpu or memory) of
// one container of the pods, as autoscaling/v2 ContainerResourceMetricSource:
// only that container's usage and request count. Utilization targets need
// averageUtilization; AverageValue targets need averageValue.
//
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Utilization' || has(self.averageUtilization)",message="averageUtilization is required when targetType is Utilization",fieldPath=".averageUtilization"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'Utilization' || !has(self.averageValue)",message="averageValue must not be set when targetType is Utilization",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || has(self.averageValue)",message="averageValue is required when targetType is AverageValue",fieldPath=".averageValue"
// +kubebuilder:validation:XValidation:rule="self.targetType != 'AverageValue' || !has(self.averageUtilization)",message="averageUtilization must not be set when targetType is AverageValue",fieldPath=".averageUtilization"
type ContainerResourceMetricSpec struct {
	// ResourceName is the resource: cpu or memory.
	// +kubebuilder:validation:Enum=cpu;memory
	ResourceName corev1.ResourceName `json:"resourceName"`
	// Container is the name of the container in each pod whose usage and
	// request count, a DNS-1123 label as in autoscaling/v2. A pod whose
	// metrics lack the container counts as missing, as upstream 1.36.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="container must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	Container string `json:"container"`
	// TargetType is Utilization or AverageValue.
	TargetType MetricTargetType `json:"targetType"`
	// AverageUtilization is the target average usage in percent of the
	// container's request; set only for Utilization. It may exceed 100.
	// +kubebuilder:validation:Minimum=1
	// +optional
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	// AverageValue is the target average usage of the container per pod; set
	// only for AverageValue. It must be positive.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="averageValue must be positive"
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
}
