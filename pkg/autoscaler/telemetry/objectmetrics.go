package telemetry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	compbasemetrics "k8s.io/component-base/metrics"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	podpilotlisters "github.com/podpilot/podpilot/pkg/generated/listers/autoscaling/v1alpha1"
)

// objectCollector exports the PodAutoscalers as the informer holds them, at scrape time, while
// this replica runs the autoscaler: their number and, when perObject, one series per object and
// metric, as kube-state-metrics does for HPAs. A deleted PodAutoscaler's series go with it.
type objectCollector struct {
	compbasemetrics.BaseStableCollector

	lister    podpilotlisters.PodAutoscalerLister
	running   func() bool
	owns      func(namespace, name string) bool
	perObject bool

	count, desired, current, minReplicas, maxReplicas, value, target, condition *compbasemetrics.Desc
	// The forecast's series (spec.prediction), from status.prediction.
	forecastReplicas, forecastLoad, forecastWAPE *compbasemetrics.Desc
}

func newObjectCollector(lister podpilotlisters.PodAutoscalerLister, running func() bool, owns func(namespace, name string) bool,
	perObject bool) *objectCollector {
	objectLabels := []string{"namespace", "name"}
	metricLabels := []string{"namespace", "name", "metric_type", "metric", "target_type"}
	conditionLabels := []string{"namespace", "name", "condition", "status"}
	// A forecast is labelled by its metric's identity: two metrics may share a name (cpu of two
	// containers, one metric of two objects), and one scrape must not carry a series twice.
	forecastLabels := []string{"namespace", "name", "metric_type", "metric", "object", "container"}
	desc := func(name, help string, labels []string) *compbasemetrics.Desc {
		return compbasemetrics.NewDesc("podpilot_podautoscaler_"+name, help, labels, nil, compbasemetrics.ALPHA, "")
	}
	return &objectCollector{
		lister: lister, running: running, owns: owns, perObject: perObject,
		count: compbasemetrics.NewDesc("podpilot_"+hpaSubsystem+"_num_horizontal_pod_autoscalers",
			"PodAutoscalers controlled by this replica (0 series while it does not lead).", nil, nil, compbasemetrics.ALPHA, ""),
		desired:     desc("desired_replicas", "status.desiredReplicas of the PodAutoscaler.", objectLabels),
		current:     desc("current_replicas", "status.currentReplicas of the PodAutoscaler.", objectLabels),
		minReplicas: desc("min_replicas", "spec.minReplicas of the PodAutoscaler (defaulted).", objectLabels),
		maxReplicas: desc("max_replicas", "spec.maxReplicas of the PodAutoscaler.", objectLabels),
		value: desc("metric_value", "Current value of a metric from status.currentMetrics, in the target's units "+
			"(percent for Utilization); absent while the metric fails.", metricLabels),
		target:    desc("metric_target", "Target of a metric from the spec (percent for Utilization).", metricLabels),
		condition: desc("condition", "1 for the status a condition of the PodAutoscaler has, 0 for the others.", conditionLabels),
		forecastReplicas: desc("forecast_replicas", "The replicas the forecast asks for one lead time ahead (status.prediction.replicas); "+
			"absent without prediction.", objectLabels),
		forecastLoad: desc("forecast_load", "A metric's load forecast one lead time ahead, headroom included: the total over the "+
			"target's pods, or the value, in the metric's units (status.prediction.metrics).", forecastLabels),
		forecastWAPE: desc("forecast_wape_ratio", "The weighted absolute percentage error of a metric's forecasts against the load "+
			"that came, over the last day, as a ratio (status.prediction.metrics).", forecastLabels),
	}
}

// DescribeWithStability sends the collector's descriptors.
func (c *objectCollector) DescribeWithStability(ch chan<- *compbasemetrics.Desc) {
	for _, d := range []*compbasemetrics.Desc{c.count, c.desired, c.current, c.minReplicas, c.maxReplicas, c.value, c.target, c.condition,
		c.forecastReplicas, c.forecastLoad, c.forecastWAPE} {
		ch <- d
	}
}

// CollectWithStability sends the count of every PodAutoscaler in the informer, and the series of
// each one this replica owns (all of them without shards), so that each object's series come from
// one replica.
func (c *objectCollector) CollectWithStability(ch chan<- compbasemetrics.Metric) {
	if !c.running() {
		return
	}
	pas, err := c.lister.List(labels.Everything())
	if err != nil {
		return
	}
	ch <- compbasemetrics.NewLazyConstMetric(c.count, compbasemetrics.GaugeValue, float64(len(pas)))
	if !c.perObject {
		return
	}
	for _, pa := range pas {
		if c.owns == nil || c.owns(pa.Namespace, pa.Name) {
			c.collect(ch, pa)
		}
	}
}

func (c *objectCollector) collect(ch chan<- compbasemetrics.Metric, pa *podpilotv1alpha1.PodAutoscaler) {
	gauge := func(d *compbasemetrics.Desc, v float64, lvs ...string) {
		ch <- compbasemetrics.NewLazyConstMetric(d, compbasemetrics.GaugeValue, v, append([]string{pa.Namespace, pa.Name}, lvs...)...)
	}
	gauge(c.desired, float64(pa.Status.DesiredReplicas))
	gauge(c.current, float64(pa.Status.CurrentReplicas))
	gauge(c.minReplicas, float64(pa.Spec.MinReplicasOrDefault()))
	gauge(c.maxReplicas, float64(pa.Spec.MaxReplicas))
	for _, m := range metricsOfObject(pa) {
		lvs := []string{string(m.typ), m.name, string(m.targetType)}
		gauge(c.target, m.target, lvs...)
		if m.hasValue {
			gauge(c.value, m.value, lvs...)
		}
	}
	if p := pa.Status.Prediction; p != nil {
		gauge(c.forecastReplicas, float64(p.Replicas))
		seen := map[podpilotv1alpha1.MetricForecast]bool{}
		for _, m := range p.Metrics {
			id := podpilotv1alpha1.MetricForecast{Type: m.Type, Name: m.Name, DescribedObject: m.DescribedObject, Container: m.Container}
			if seen[id] {
				continue // a status written by hand may repeat one
			}
			seen[id] = true
			lvs := []string{string(m.Type), m.Name, m.DescribedObject, m.Container}
			if m.Value != nil {
				gauge(c.forecastLoad, m.Value.AsApproximateFloat64(), lvs...)
			}
			if m.WAPEPercent != nil {
				gauge(c.forecastWAPE, float64(*m.WAPEPercent)/100, lvs...)
			}
		}
	}
	for _, cond := range pa.Status.Conditions {
		for _, s := range []string{"true", "false", "unknown"} {
			v := 0.0
			if s == lowerStatus(string(cond.Status)) {
				v = 1
			}
			gauge(c.condition, v, cond.Type, s)
		}
	}
}

func lowerStatus(s string) string {
	switch s {
	case "True":
		return "true"
	case "False":
		return "false"
	}
	return "unknown"
}

// objectMetric is one metric of a PodAutoscaler: its target from the spec and its current value
// from the status.
type objectMetric struct {
	typ  podpilotv1alpha1.MetricSourceType
	name string
	// container and object complete the metric's identity (see status.MetricStatusOf), by which its
	// status is found.
	container, object string
	targetType        podpilotv1alpha1.MetricTargetType
	target            float64
	value             float64
	hasValue          bool
}

// metricsOfObject joins the spec's metrics with status.currentMetrics by identity. A metric whose labels repeat an earlier one's is skipped, since a scrape must not
// carry one series twice.
func metricsOfObject(pa *podpilotv1alpha1.PodAutoscaler) []objectMetric {
	var out []objectMetric
	for _, m := range pa.Spec.CustomMetrics {
		out = append(out, objectMetric{typ: podpilotv1alpha1.CustomMetricSourceType, name: m.MetricName,
			targetType: podpilotv1alpha1.AverageValueMetricType, target: m.AverageValue.AsApproximateFloat64()})
	}
	for _, m := range pa.Spec.ResourceMetrics {
		om := objectMetric{typ: podpilotv1alpha1.ResourceMetricSourceType, name: string(m.ResourceName), targetType: m.TargetType}
		switch {
		case m.TargetType == podpilotv1alpha1.UtilizationMetricType && m.AverageUtilization != nil:
			om.target = float64(*m.AverageUtilization)
		case m.AverageValue != nil:
			om.target = m.AverageValue.AsApproximateFloat64()
		}
		out = append(out, om)
	}
	out = append(out, kindObjectMetrics(pa)...)
	seen := map[string]bool{}
	unique := out[:0]
	for _, m := range out {
		key := fmt.Sprint(m.typ, "/", m.name, "/", m.targetType)
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, st := range pa.Status.CurrentMetrics {
			if st.Type == m.typ && st.Name == m.name && st.Container == m.container && st.DescribedObject == m.object {
				m.value, m.hasValue = currentValue(st, m)
				break
			}
		}
		unique = append(unique, m)
	}
	return unique
}

// kindObjectMetrics lists pa's object, external and container resource metrics, in that order.
// Object and container resource metrics are named by their metric and resource, as
// kube-state-metrics names an HPA's.
func kindObjectMetrics(pa *podpilotv1alpha1.PodAutoscaler) []objectMetric {
	var out []objectMetric
	valueMetric := func(typ podpilotv1alpha1.MetricSourceType, name string, tt podpilotv1alpha1.ValueTargetType, value, average *resource.Quantity) {
		om := objectMetric{typ: typ, name: name, targetType: podpilotv1alpha1.MetricTargetType(tt)}
		switch {
		case tt == podpilotv1alpha1.ValueTarget && value != nil:
			om.target = value.AsApproximateFloat64()
		case tt == podpilotv1alpha1.AverageValueTarget && average != nil:
			om.target = average.AsApproximateFloat64()
		}
		out = append(out, om)
	}
	for _, m := range pa.Spec.ObjectMetrics {
		valueMetric(podpilotv1alpha1.ObjectMetricSourceType, m.MetricName, m.TargetType, m.Value, m.AverageValue)
		out[len(out)-1].object = m.DescribedObject.Kind + "/" + m.DescribedObject.Name
	}
	for _, m := range pa.Spec.ExternalMetrics {
		valueMetric(podpilotv1alpha1.ExternalMetricSourceType, m.MetricName, m.TargetType, m.Value, m.AverageValue)
	}
	for _, m := range pa.Spec.ContainerResourceMetrics {
		om := objectMetric{typ: podpilotv1alpha1.ContainerResourceMetricSourceType, name: string(m.ResourceName), targetType: m.TargetType, container: m.Container}
		switch {
		case m.TargetType == podpilotv1alpha1.UtilizationMetricType && m.AverageUtilization != nil:
			om.target = float64(*m.AverageUtilization)
		case m.AverageValue != nil:
			om.target = m.AverageValue.AsApproximateFloat64()
		}
		out = append(out, om)
	}
	return out
}

// currentValue is s's value in m's units, when s is m's status and has one.
func currentValue(s podpilotv1alpha1.MetricStatus, m objectMetric) (float64, bool) {
	if s.Type != m.typ || s.Name != m.name {
		return 0, false
	}
	if m.targetType == podpilotv1alpha1.UtilizationMetricType {
		if s.AverageUtilization == nil {
			return 0, false
		}
		return float64(*s.AverageUtilization), true
	}
	if m.targetType == podpilotv1alpha1.MetricTargetType(podpilotv1alpha1.ValueTarget) {
		if s.Value == nil {
			return 0, false
		}
		return s.Value.AsApproximateFloat64(), true
	}
	if s.AverageValue == nil {
		return 0, false
	}
	return s.AverageValue.AsApproximateFloat64(), true
}
