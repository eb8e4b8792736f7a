package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/yaml"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/calendar"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// ErrUnsupportedSpec means a PodAutoscaler uses something replay cannot model.
var ErrUnsupportedSpec = errors.New("not supported by replay")

// Spec is one PodAutoscaler to replay, converted to the algorithm's inputs.
type Spec struct {
	// Name labels the spec in the output: the file's base name without extension.
	Name string
	// PodAutoscaler is the object as read.
	PodAutoscaler *podpilotv1alpha1.PodAutoscaler
	// Metrics are the spec's metrics with their targets, custom ones first, as the controller orders them.
	Metrics []MetricSpec
	// Behavior is the spec's behavior; nil selects the legacy normalization.
	Behavior *normalize.Behavior
	// Calendar holds the spec's schedule windows; nil without any.
	Calendar *calendar.Calendar
}

// floor is the schedule floor at now.
func (s Spec) floor(now time.Time) decision.Floor {
	if s.Calendar == nil {
		return decision.Floor{}
	}
	st := s.Calendar.At(now)
	if len(st.Active) == 0 {
		return decision.Floor{}
	}
	return decision.Floor{Replicas: st.Floor, Window: st.Active[0].Name}
}

// Predicts tells whether the spec asks for a forecast (ForecastOnly or ScaleOut): replay then
// compares the reactive, predictive and oracle runs of it.
func (s Spec) Predicts() bool {
	return specconv.ForecastMode(s.PodAutoscaler.Spec.Prediction) != ""
}

// MetricSpec is one metric of a Spec.
type MetricSpec struct {
	// Kind is Pods (custom), Resource, Object, External or ContainerResource.
	Kind decision.MetricKind
	// Name is the custom, object or external metric's name, or the resource name.
	Name string
	// Target is the metric's target; a ContainerResource target names its container.
	Target replicas.Target
	// Selector narrows a Pods, Object or External metric's series; nil selects every series.
	Selector *podpilotv1alpha1.MetricSelector
	// Described is the object an Object metric describes; zero for the other kinds.
	Described podpilotv1alpha1.MetricObjectReference
	// Fallback is an External metric's fallback; nil without one.
	Fallback *decision.Fallback
}

// LoadSpec reads one PodAutoscaler from a YAML or JSON file.
func LoadSpec(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("read PodAutoscaler file: %w", err)
	}
	pa := &podpilotv1alpha1.PodAutoscaler{}
	if err := yaml.UnmarshalStrict(data, pa); err != nil {
		return Spec{}, fmt.Errorf("decode PodAutoscaler in %s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return SpecOf(name, pa)
}

// SpecOf converts pa to the algorithm's inputs, as the controller does.
func SpecOf(name string, pa *podpilotv1alpha1.PodAutoscaler) (Spec, error) {
	if _, err := pa.TargetReference(); err != nil {
		return Spec{}, err
	}
	if pa.Spec.MaxReplicas < pa.Spec.MinReplicasOrDefault() {
		return Spec{}, fmt.Errorf("PodAutoscaler %s: maxReplicas %d below minReplicas %d", pa.Name, pa.Spec.MaxReplicas, pa.Spec.MinReplicasOrDefault())
	}
	s := Spec{Name: name, PodAutoscaler: pa, Behavior: specconv.Behavior(pa.Spec.Behavior)}
	if len(pa.Spec.Schedules) > 0 {
		c, err := calendar.Compile(specconv.Windows(pa.Spec.Schedules))
		if err != nil {
			return Spec{}, fmt.Errorf("PodAutoscaler %s: %w", pa.Name, err)
		}
		s.Calendar = c
	}
	metrics, err := metricSpecs(pa)
	if err != nil {
		return Spec{}, err
	}
	s.Metrics = metrics
	if err := checkForecastable(s); err != nil {
		return Spec{}, err
	}
	if len(s.Metrics) == 0 {
		return Spec{}, fmt.Errorf("PodAutoscaler %s has no metric: %w", pa.Name, ErrUnsupportedSpec)
	}
	return s, nil
}

// metricSpecs converts pa's metrics as the controller does (controller.metricReads), in its
// order: custom, resource, object, external, container resource.
func metricSpecs(pa *podpilotv1alpha1.PodAutoscaler) ([]MetricSpec, error) {
	var out []MetricSpec
	for _, m := range pa.Spec.CustomMetrics {
		out = append(out, MetricSpec{Kind: decision.PodsMetric, Name: m.MetricName, Selector: m.Selector, Target: specconv.CustomTarget(m)})
	}
	for _, m := range pa.Spec.ResourceMetrics {
		t, ok := specconv.ResourceTarget(m)
		if !ok {
			return nil, fmt.Errorf("PodAutoscaler %s: resource metric %s: target %s without its value: %w", pa.Name, m.ResourceName, m.TargetType, ErrUnsupportedSpec)
		}
		out = append(out, MetricSpec{Kind: decision.ResourceMetric, Name: string(m.ResourceName), Target: t})
	}
	for _, m := range pa.Spec.ObjectMetrics {
		out = append(out, MetricSpec{Kind: decision.ObjectMetric, Name: m.MetricName, Selector: m.Selector, Described: m.DescribedObject,
			Target: specconv.ValueTarget(m.TargetType, m.Value, m.AverageValue)})
	}
	for _, m := range pa.Spec.ExternalMetrics {
		out = append(out, MetricSpec{Kind: decision.ExternalMetric, Name: m.MetricName, Selector: m.Selector,
			Target: specconv.ValueTarget(m.TargetType, m.Value, m.AverageValue), Fallback: specconv.Fallback(m.Fallback)})
	}
	for _, m := range pa.Spec.ContainerResourceMetrics {
		out = append(out, MetricSpec{Kind: decision.ContainerResourceMetric, Name: string(m.ResourceName), Target: specconv.ContainerResourceTarget(m)})
	}
	return out, nil
}

// checkForecastable refuses a spec with spec.prediction and a Value target on an Object or
// External metric: replay models that value as a load spread over the replicas (see Trace),
// which its forecast of the value does not follow.
func checkForecastable(s Spec) error {
	if !s.Predicts() {
		return nil
	}
	for _, m := range s.Metrics {
		if m.wholeTarget() && m.Target.Type == replicas.Value {
			return fmt.Errorf("PodAutoscaler %s: %s metric %s: spec.prediction with a Value target on an Object or External metric: %w",
				s.PodAutoscaler.Name, m.Kind, m.Name, ErrUnsupportedSpec)
		}
	}
	return nil
}

// wholeTarget reports whether m is a metric of the whole target (Object, External), whose value is
// not spread over the pods by the metrics source.
func (m MetricSpec) wholeTarget() bool {
	return m.Kind == decision.ObjectMetric || m.Kind == decision.ExternalMetric
}

// perPod reports whether m is read per pod (Pods, Resource, ContainerResource): its series name
// the pods, which the workload's are picked out by.
func (m MetricSpec) perPod() bool { return !m.wholeTarget() }

// decisionMetric is m as the decision's input, without data.
func (m MetricSpec) decisionMetric() decision.Metric {
	return decision.Metric{Kind: m.Kind, Name: m.Name, Target: m.Target, DescribedKind: m.Described.Kind, DescribedName: m.Described.Name,
		Fallback: m.Fallback}
}

// ID is the identity of the metric in a decision: a forecast's load is keyed by it.
func (m MetricSpec) ID() decision.MetricID {
	return m.decisionMetric().ID()
}

// CheckRequests refuses a spec with a Utilization target whose request requests lacks: the pod's
// (--pod-requests) for a Resource metric, the container's (--container-requests) for a
// ContainerResource one. Without it every step's decision would fail the metric.
func CheckRequests(s Spec, requests *Requests) error {
	for _, m := range s.Metrics {
		if m.Target.Type != replicas.Utilization {
			continue
		}
		if _, ok := requests.of(m.Target); ok {
			continue
		}
		if m.Target.Container != "" {
			return fmt.Errorf("PodAutoscaler %s: %s metric %s of container %s has a Utilization target: give the container's request with --container-requests %s/%s=<quantity>: %w",
				s.PodAutoscaler.Name, m.Kind, m.Name, m.Target.Container, m.Target.Container, m.Name, ErrUnsupportedSpec)
		}
		return fmt.Errorf("PodAutoscaler %s: %s metric %s has a Utilization target: give the pod's request with --pod-requests %s=<quantity>: %w",
			s.PodAutoscaler.Name, m.Kind, m.Name, m.Name, ErrUnsupportedSpec)
	}
	return nil
}
