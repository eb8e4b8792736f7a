package metrics

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// CustomSource serves per-object custom metrics. Its method has the signature of
// provider.CustomMetricsProvider.GetMetricBySelector, so podpilot's Prometheus provider satisfies
// it in-process, as does any other custom-metrics-apiserver provider.
type CustomSource interface {
	// GetMetricBySelector returns metric info.Metric of the objects of info.GroupResource in
	// namespace matching selector, narrowed by metricSelector.
	GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error)
}

// ExternalSource serves external metrics. Its method has the signature of
// provider.ExternalMetricsProvider.GetExternalMetric, so podpilot's Prometheus provider satisfies it
// in-process, as does any other custom-metrics-apiserver provider.
type ExternalSource interface {
	// GetExternalMetric returns the series of external metric info.Metric for namespace, narrowed by
	// metricSelector.
	GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error)
}

// ResourceSource serves the cpu and memory usage of pods, as metrics.k8s.io does.
type ResourceSource interface {
	// ListPodMetrics returns the usage of every pod in namespace.
	ListPodMetrics(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error)
}

// ResourceMetricsAPI is a ResourceSource reading metrics.k8s.io through its clientset.
type ResourceMetricsAPI struct {
	client metricsclient.Interface
}

var _ ResourceSource = (*ResourceMetricsAPI)(nil)

// NewResourceMetricsAPI returns a ResourceSource backed by client.
func NewResourceMetricsAPI(client metricsclient.Interface) *ResourceMetricsAPI {
	return &ResourceMetricsAPI{client: client}
}

// ListPodMetrics lists the PodMetrics of namespace.
func (s *ResourceMetricsAPI) ListPodMetrics(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error) {
	list, err := s.client.MetricsV1beta1().PodMetricses(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pod metrics in namespace %s: %w", namespace, err)
	}
	return list, nil
}
