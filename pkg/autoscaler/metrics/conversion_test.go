package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// convertedAt is the timestamp of the values in the conversion tests.
var convertedAt = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

// errOf returns the sample of name's error, or a failure if there is no sample.
func errOf(t *testing.T, samples map[string]replicas.Sample, name string) error {
	t.Helper()
	s, ok := samples[name]
	if !ok {
		t.Fatalf("no sample of %s in %+v", name, samples)
	}
	return s.Err
}

// TestConversionKeepsAnUnconvertibleValueAsItsPodsError checks issue 21 §1's first finding at
// each per-pod conversion: a value MilliValue reads as 0 (9.3e15, 1e16) or a negative one is the
// pod's sample's error, not data, and the other pods' samples are unaffected.
func TestConversionKeepsAnUnconvertibleValueAsItsPodsError(t *testing.T) {
	podValue := func(name, v string) custom_metrics.MetricValue {
		return custom_metrics.MetricValue{DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Name: name},
			Timestamp: metav1.NewTime(convertedAt), Value: resource.MustParse(v)}
	}
	custom := customSamples(&custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{
		podValue("ok", "1500m"), podValue("huge", "9.3e15"), podValue("negative", "-2"),
	}})
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	podMetrics := func(name string, containers ...string) metricsv1beta1.PodMetrics {
		pm := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.NewTime(convertedAt)}
		for i, v := range containers {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: []string{"app", "sidecar"}[i], Usage: cpu(v)})
		}
		return pm
	}
	items := []metricsv1beta1.PodMetrics{
		podMetrics("ok", "100m", "200m"), podMetrics("huge", "1e16", "1"), podMetrics("sum-past-int64", "9e15", "9e15"),
		podMetrics("negative", "-1m", "1"),
	}
	pods := resourceSamples(items, corev1.ResourceCPU)
	app := containerView(podUsage{items: items}, "app").samples[corev1.ResourceCPU]
	tests := []struct {
		name    string
		samples map[string]replicas.Sample
		pod     string
		want    error
	}{
		{name: "a custom value in range converts", samples: custom, pod: "ok"},
		{name: "a custom value of 9.3e15 is out of range, not 0", samples: custom, pod: "huge", want: replicas.ErrValueOutOfRange},
		{name: "a negative custom value is ErrNegativeValue", samples: custom, pod: "negative", want: replicas.ErrNegativeValue},
		{name: "a pod's cpu in range converts", samples: pods, pod: "ok"},
		{name: "a container's cpu of 1e16 is out of range for the pod", samples: pods, pod: "huge", want: replicas.ErrValueOutOfRange},
		{name: "a pod's containers summing past int64 milli-units are out of range", samples: pods, pod: "sum-past-int64", want: replicas.ErrValueOutOfRange},
		{name: "a negative container usage is ErrNegativeValue for the pod", samples: pods, pod: "negative", want: replicas.ErrNegativeValue},
		{name: "a container's usage of 1e16 is out of range for a ContainerResource metric", samples: app, pod: "huge", want: replicas.ErrValueOutOfRange},
		{name: "a container's usage of 9e15 converts: only the pod's sum is out of range", samples: app, pod: "sum-past-int64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := errOf(t, tc.samples, tc.pod); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("sample of %s: err = %v, want %v", tc.pod, err, tc.want)
			}
		})
	}
	if got := pods["ok"].Value; got != 300 {
		t.Errorf("the pod's cpu = %dm, want the sum 300m of its containers", got)
	}
}

func TestAnUnconvertibleExternalSeriesFailsTheMetricNamingIt(t *testing.T) {
	series := func(queue, v string) external_metrics.ExternalMetricValue {
		return external_metrics.ExternalMetricValue{MetricName: "queue_length", MetricLabels: map[string]string{"queue": queue}, Value: resource.MustParse(v)}
	}
	got, err := externalValues(&external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{series("a", "3"), series("b", "4")}})
	if err != nil || len(got) != 2 || got[0] != 3000 || got[1] != 4000 {
		t.Errorf("externalValues of 3 and 4 = %v, %v; want [3000 4000]", got, err)
	}
	for v, want := range map[string]error{"1e16": replicas.ErrValueOutOfRange, "-1": replicas.ErrNegativeValue} {
		_, err := externalValues(&external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{series("a", "3"), series("b", v)}})
		if !errors.Is(err, want) || err == nil || !strings.Contains(err.Error(), "queue=b") {
			t.Errorf("externalValues with a series of %s: err = %v, want %v naming queue=b", v, err, want)
		}
	}
}

func TestAnUnconvertibleObjectValueFailsOnlyThatObject(t *testing.T) {
	object := func(name, v string) custom_metrics.MetricValue {
		return custom_metrics.MetricValue{DescribedObject: custom_metrics.ObjectReference{Kind: "Service", Name: name}, Value: resource.MustParse(v)}
	}
	values := objectValues(&custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{object("web", "25"), object("huge", "1e300")}})
	if v := values["web"]; v.err != nil || v.milli != 25_000 {
		t.Errorf("web = %+v, want 25000 milli-units", v)
	}
	if v := values["huge"]; !errors.Is(v.err, replicas.ErrValueOutOfRange) {
		t.Errorf("huge = %+v, want ErrValueOutOfRange", v)
	}
}
