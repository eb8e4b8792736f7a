package replicas

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Defaults of upstream's kube-controller-manager HPA flags.
const (
	// DefaultTolerance is the default scale-up and scale-down tolerance of the usage ratio.
	DefaultTolerance = 0.1
	// DefaultCPUInitializationPeriod is the period after pod start during which cpu samples may be skipped.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultDelayOfInitialReadinessStatus is the period after pod start during which a not-ready pod is
	// assumed to be still initializing.
	DefaultDelayOfInitialReadinessStatus = 30 * time.Second
)

var (
	// ErrNoPods means the selector matched no pods.
	ErrNoPods = errors.New("no pods returned by selector while calculating replica count")
	// ErrNoMetrics means no usable sample was left (pods might be unready or the source returned none).
	ErrNoMetrics = errors.New("did not receive metrics for targeted pods (pods might be unready)")
	// ErrMissingRequest means a pod lacks the resource request a Utilization target needs.
	ErrMissingRequest = errors.New("missing resource request")
	// ErrContainerNotFound means a live pod's spec lacks a ContainerResource target's container
	// (among its containers and restartable init containers); it fails the metric, as upstream's
	// calculateRequests ("container … not found in Pod …").
	ErrContainerNotFound = errors.New("container not found in the pod")
	// ErrInvalidTarget means the target is of an unknown type or its value is not positive.
	ErrInvalidTarget = errors.New("invalid metric target")
	// ErrValueOutOfRange means a metric value, or a sum or product of them, is beyond what the
	// calculators compute with: int64 milli-units (about ±9.2e15 units), or int32 percent of a
	// utilization. It fails the metric where upstream's arithmetic would read 0 or wrap.
	ErrValueOutOfRange = errors.New("metric value out of the range the autoscaler computes with")
	// ErrNegativeValue means a metric value or a request is negative, which no target (all are
	// positive) can be compared with; it fails the metric rather than propose a scale-down.
	ErrNegativeValue = errors.New("negative metric value")
)

// Pod is what the calculator needs to know about one pod selected by the scale target.
type Pod struct {
	// Name identifies the pod; Sample maps are keyed by it.
	Name string
	// Deleted is true when the pod has a deletion timestamp.
	Deleted bool
	// Phase is the pod's status phase.
	Phase corev1.PodPhase
	// Ready is true when the pod's Ready condition is True.
	Ready bool
	// ReadyTransition is the last transition time of the Ready condition; zero means the pod has no
	// Ready condition.
	ReadyTransition time.Time
	// Start is the pod's status start time; zero means it has not started.
	Start time.Time
	// Requests holds the resource requests in effect in milli-units (after an in-place resize, the
	// ones the kubelet reports in the pod's status, else the spec's), the pod-level ones or the sum
	// over containers; a key is absent when any container lacks that request.
	Requests map[corev1.ResourceName]int64
	// ContainerRequests holds each container's own cpu and memory requests in milli-units, by
	// container name (regular and restartable init containers); a resource is absent when that
	// container lacks the request. Only ContainerResource targets read it.
	ContainerRequests map[string]map[corev1.ResourceName]int64
	// RequestErrs holds, by resource, why a request of the pod or of one of its containers could
	// not be read as milli-units (ErrValueOutOfRange); a Utilization target on that resource then
	// fails its metric, which holds the replicas, rather than read the request as absent or wrapped.
	RequestErrs map[corev1.ResourceName]error
	// Resizing is true while an in-place resize of the pod is in flight (pending, Deferred or
	// Infeasible, or in progress). Requests and ContainerRequests are the requests in effect;
	// on a scale-down a Utilization target counts such a pod as using its target (see Calculate).
	Resizing bool
}

// Sample is one pod's metric value.
type Sample struct {
	// Value is the pod's metric value in milli-units.
	Value int64
	// Timestamp is when the sample was taken (the end of its window).
	Timestamp time.Time
	// Window is the duration the sample was computed over.
	Window time.Duration
	// Err is why the pod's value could not be read as milli-units (ErrValueOutOfRange,
	// ErrNegativeValue); Value is then unused, and the metric fails if the pod's sample is used.
	Err error
}

// TargetType is the kind of metric target, as in autoscaling/v2.
type TargetType string

const (
	// Utilization targets an average percentage of the pods' resource requests.
	Utilization TargetType = "Utilization"
	// AverageValue targets an average value per pod.
	AverageValue TargetType = "AverageValue"
	// Value targets a total value (external metrics only).
	Value TargetType = "Value"
)

// Target is the desired level of one metric.
type Target struct {
	// Type selects which of the value fields applies.
	Type TargetType
	// Resource is cpu or memory for resource metrics and empty for custom and external metrics.
	Resource corev1.ResourceName
	// Container narrows a resource target to one container of each pod (a ContainerResource
	// metric): its usage and its request alone count.
	Container string
	// AverageValue is the per-pod target in milli-units, for AverageValue targets.
	AverageValue int64
	// Value is the total target in milli-units, for Value targets.
	Value int64
	// Utilization is the target percentage of requests, for Utilization targets.
	Utilization int32
	// Err is why the spec's target value could not be converted to milli-units
	// (ErrValueOutOfRange); the target is then invalid.
	Err error
}

func (t Target) validate() error {
	switch {
	case t.Err != nil:
		return fmt.Errorf("%s target %w: %w", t.Type, t.Err, ErrInvalidTarget)
	case t.Type == Utilization && t.Utilization > 0 && t.Resource != "":
		return nil
	case t.Type == AverageValue && t.AverageValue > 0:
		return nil
	case t.Type == Value && t.Value > 0:
		return nil
	}
	return fmt.Errorf("target %+v: %w", t, ErrInvalidTarget)
}

// Tolerances are how far the usage ratio may move from 1.0 before a scale is proposed.
type Tolerances struct {
	// ScaleDown is the tolerance below 1.0.
	ScaleDown float64
	// ScaleUp is the tolerance above 1.0.
	ScaleUp float64
}

// Within reports whether ratio is close enough to 1.0 to keep the current replicas.
func (t Tolerances) Within(ratio float64) bool {
	return 1.0-t.ScaleDown <= ratio && ratio <= 1.0+t.ScaleUp
}

// Config holds the calculator settings that come from flags.
type Config struct {
	// Tolerances of the usage ratio.
	Tolerances Tolerances
	// CPUInitializationPeriod is how long after start a pod's cpu samples may be skipped.
	CPUInitializationPeriod time.Duration
	// DelayOfInitialReadinessStatus is how long after start a not-ready pod counts as initializing.
	DelayOfInitialReadinessStatus time.Duration
}

// DefaultConfig returns upstream's default settings.
func DefaultConfig() Config {
	return Config{
		Tolerances:                    Tolerances{ScaleDown: DefaultTolerance, ScaleUp: DefaultTolerance},
		CPUInitializationPeriod:       DefaultCPUInitializationPeriod,
		DelayOfInitialReadinessStatus: DefaultDelayOfInitialReadinessStatus,
	}
}

// Result is one metric's replica proposal and what it observed.
type Result struct {
	// Replicas is the proposed replica count.
	Replicas int32
	// UsageRatio is current usage over target, before missing or ignored pods were accounted for.
	UsageRatio float64
	// AverageValue is the current average per pod in milli-units (raw value, also for Utilization).
	AverageValue int64
	// Value is the current total in milli-units, for external Value targets.
	Value int64
	// Utilization is the current percentage of requests, for Utilization targets.
	Utilization int32
	// Ready counts pods whose samples were used.
	Ready int
	// Missing counts live pods without a sample.
	Missing int
	// Ignored counts pending or not-yet-ready pods whose samples were dropped.
	Ignored int
	// Timestamp is the oldest timestamp among the samples used.
	Timestamp time.Time
}
