package metrics

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// externalFunc is an ExternalSource made of a function.
type externalFunc func(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error)

func (f externalFunc) GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return f(ctx, namespace, metricSelector, info)
}

// queue serves one series per "queue" label value, 1, 2 and 3, filtered by the metric selector.
func queue(calls *atomic.Int32) externalFunc {
	return func(_ context.Context, _ string, sel labels.Selector, _ provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
		calls.Add(1)
		list := &external_metrics.ExternalMetricValueList{}
		for name, v := range map[string]string{"a": "1", "b": "2", "c": "3"} {
			l := map[string]string{"queue": name}
			if sel.Matches(labels.Set(l)) {
				list.Items = append(list.Items, external_metrics.ExternalMetricValue{MetricName: "queue_length", MetricLabels: l, Value: resource.MustParse(v)})
			}
		}
		return list, nil
	}
}

func TestExternalMetric(t *testing.T) {
	var calls atomic.Int32
	f, _ := newTestFetcher(t, FetcherConfig{External: queue(&calls)})
	ctx := t.Context()
	sum := func(vs []int64) (s int64) {
		for _, v := range vs {
			s += v
		}
		return s
	}
	all, err := f.ExternalMetric(ctx, "dns", "queue_length", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(all); got != 6000 {
		t.Errorf("External without selector: sum of every series = %d milli, want 6000", got)
	}
	one, err := f.ExternalMetric(ctx, "dns", "queue_length", labels.SelectorFromSet(labels.Set{"queue": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{2000}, one); diff != "" {
		t.Errorf("External with a selector: values (-want +got):\n%s", diff)
	}
	// Two more autoscalers of the namespace on the unselected metric share the first call.
	for range 2 {
		if _, err := f.ExternalMetric(ctx, "dns", "queue_length", labels.Everything()); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("source calls = %d, want 2 (one per namespace, metric and selector)", got)
	}
}

func TestExternalMetricErrors(t *testing.T) {
	f, _ := newTestFetcher(t, FetcherConfig{})
	if _, err := f.ExternalMetric(t.Context(), "dns", "queue_length", nil); !errors.Is(err, ErrNoSource) {
		t.Errorf("without a source: err = %v, want ErrNoSource", err)
	}
	f, _ = newTestFetcher(t, FetcherConfig{External: externalFunc(func(context.Context, string, labels.Selector, provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
		return nil, errProm
	})})
	if _, err := f.ExternalMetric(t.Context(), "dns", "queue_length", nil); !errors.Is(err, errProm) {
		t.Errorf("err = %v, want %v", err, errProm)
	}
}

func TestObjectMetricIsOneCallPerNamespaceKindAndMetric(t *testing.T) {
	var calls atomic.Int32
	var asked provider.CustomMetricInfo
	src := customFunc(func(_ context.Context, _ string, selector labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		calls.Add(1)
		asked = info
		if !selector.Empty() {
			return nil, errors.New("unexpected request: want every object of the kind")
		}
		list := &custom_metrics.MetricValueList{}
		for name, v := range map[string]string{"web": "25", "api": "7"} {
			list.Items = append(list.Items, custom_metrics.MetricValue{
				DescribedObject: custom_metrics.ObjectReference{Kind: "Service", Name: name, Namespace: "dns"}, Value: resource.MustParse(v)})
		}
		return list, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: src})
	svc := schema.GroupKind{Kind: "Service"}
	want := map[string]int64{"web": 25_000, "api": 7_000}
	for name, v := range want {
		got, err := f.ObjectMetric(t.Context(), "dns", svc, name, "requests", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != v {
			t.Errorf("%s = %d, want %d", name, got, v)
		}
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("source calls = %d, want 1 for two objects of one kind and metric", got)
	}
	if diff := cmp.Diff(provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "service"}, Namespaced: true, Metric: "requests"}, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if _, err := f.ObjectMetric(t.Context(), "dns", svc, "gone", "requests", nil); !errors.Is(err, ErrNoObjectValue) {
		t.Errorf("an object without a value: err = %v, want ErrNoObjectValue", err)
	}
}

func TestContainerResourceMetric(t *testing.T) {
	cpu := func(v string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
	}
	list := &metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{
		{ObjectMeta: metav1.ObjectMeta{Name: "p0"}, Timestamp: metav1.NewTime(now), Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: cpu("100m")}, {Name: "sidecar", Usage: cpu("900m")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "p1-app-without-cpu"}, Timestamp: metav1.NewTime(now), Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: corev1.ResourceList{}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "p2-other-workload"}, Timestamp: metav1.NewTime(now), Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "db", Usage: cpu("5")}}},
	}}
	var calls atomic.Int32
	f, _ := newTestFetcher(t, FetcherConfig{Resource: resourceFunc(func(context.Context, string) (*metricsv1beta1.PodMetricsList, error) {
		calls.Add(1)
		return list, nil
	})})
	got, err := f.ContainerResourceMetric(t.Context(), "dns", corev1.ResourceCPU, "app")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]replicas.Sample{"p0": {Value: 100, Timestamp: now}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("container app (-want +got):\n%s", diff)
	}
	// The pod-level resource metric and another container share the same list.
	if _, err := f.ResourceMetric(t.Context(), "dns", corev1.ResourceCPU); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ContainerResourceMetric(t.Context(), "dns", corev1.ResourceCPU, "sidecar"); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("pod metrics lists = %d, want 1", got)
	}
}

// A Namespace is read as upstream's metrics client reads it: the root-scoped namespace object
// named after the PodAutoscaler's namespace, whatever name the describedObject gives.
func TestObjectMetricOfTheNamespace(t *testing.T) {
	var askedNamespace string
	var asked provider.CustomMetricInfo
	src := customFunc(func(_ context.Context, namespace string, _ labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		askedNamespace, asked = namespace, info
		return &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{
			{DescribedObject: custom_metrics.ObjectReference{Kind: "Namespace", Name: "dns"}, Value: resource.MustParse("3")},
			{DescribedObject: custom_metrics.ObjectReference{Kind: "Namespace", Name: "web"}, Value: resource.MustParse("9")},
		}}, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: src})
	got, err := f.ObjectMetric(t.Context(), "dns", schema.GroupKind{Kind: "Namespace"}, "ignored", "queue_length", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3000 {
		t.Errorf("value = %d, want 3000", got)
	}
	if askedNamespace != "" || asked.Namespaced || asked.GroupResource.Resource != "namespace" {
		t.Errorf("asked namespace %q for %+v, want the root-scoped namespaces", askedNamespace, asked)
	}
}
