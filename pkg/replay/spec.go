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
	// Kind is Pods (custom) or Resource.
	Kind decision.MetricKind
	// Name is the custom metric name or the resource name.
	Name string
	// Target is the metric's target.
	Target replicas.Target
	// Custom is the custom metric's spec, for its label selector; nil for resource metrics.
	Custom *podpilotv1alpha1.CustomMetricSpec
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
	if n := len(pa.Spec.ObjectMetrics) + len(pa.Spec.ExternalMetrics) + len(pa.Spec.ContainerResourceMetrics); n > 0 {
		return Spec{}, fmt.Errorf("PodAutoscaler %s: objectMetrics, externalMetrics and containerResourceMetrics (%d set): %w",
			pa.Name, n, ErrUnsupportedSpec)
	}
	s := Spec{Name: name, PodAutoscaler: pa, Behavior: specconv.Behavior(pa.Spec.Behavior)}
	if len(pa.Spec.Schedules) > 0 {
		c, err := calendar.Compile(specconv.Windows(pa.Spec.Schedules))
		if err != nil {
			return Spec{}, fmt.Errorf("PodAutoscaler %s: %w", pa.Name, err)
		}
		s.Calendar = c
	}
	for i := range pa.Spec.CustomMetrics {
		m := &pa.Spec.CustomMetrics[i]
		s.Metrics = append(s.Metrics, MetricSpec{Kind: decision.PodsMetric, Name: m.MetricName, Custom: m, Target: specconv.CustomTarget(*m)})
	}
	for _, m := range pa.Spec.ResourceMetrics {
		t, ok := specconv.ResourceTarget(m)
		if !ok {
			return Spec{}, fmt.Errorf("PodAutoscaler %s: resource metric %s: target %s without its value: %w", pa.Name, m.ResourceName, m.TargetType, ErrUnsupportedSpec)
		}
		s.Metrics = append(s.Metrics, MetricSpec{Kind: decision.ResourceMetric, Name: string(m.ResourceName), Target: t})
	}
	if len(s.Metrics) == 0 {
		return Spec{}, fmt.Errorf("PodAutoscaler %s has no custom or resource metric: %w", pa.Name, ErrUnsupportedSpec)
	}
	return s, nil
}

// ID is the identity of the metric in a decision: a forecast's load is keyed by it.
func (m MetricSpec) ID() decision.MetricID {
	return decision.Metric{Kind: m.Kind, Name: m.Name, Target: m.Target}.ID()
}
