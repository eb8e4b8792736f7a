package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// ErrClusterExternalMetricRefused means a PodAutoscaler asked for an external metric of a rule
// marked namespaced: false, whose queries are not limited to the PodAutoscaler's namespace, and
// TenancyOptions refuse those to its namespace.
var ErrClusterExternalMetricRefused = errors.New("cluster-wide external metric refused to PodAutoscalers in this namespace")

// TenancyOptions limit what a PodAutoscaler's author can read through podpilot beyond what
// the reads of the PodAutoscaler's own namespace give.
type TenancyOptions struct {
	// RestrictClusterExternalMetrics refuses PodAutoscalers the external metrics of rules
	// marked namespaced: false, except in ClusterExternalMetricsNamespaces.
	RestrictClusterExternalMetrics bool
	// ClusterExternalMetricsNamespaces may still read them while they are restricted.
	ClusterExternalMetricsNamespaces []string
}

// NewTenancyOptions returns TenancyOptions with their defaults: nothing restricted, as before
// the options existed.
func NewTenancyOptions() *TenancyOptions { return &TenancyOptions{} }

// AddFlags adds --autoscaler-restrict-cluster-external-metrics and
// --autoscaler-cluster-external-metrics-namespaces to fs.
func (o *TenancyOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.RestrictClusterExternalMetrics, "autoscaler-restrict-cluster-external-metrics", o.RestrictClusterExternalMetrics,
		"Refuse PodAutoscalers the external metrics of rules marked namespaced: false. Their queries are not limited to the "+
			"PodAutoscaler's namespace, so a metric selector such as namespace=other reads another namespace's series, and "+
			"anyone who may edit PodAutoscalers sees the values in their status. A refused metric fails like any other "+
			"(ScalingActive=False, replicas held). Off by default, for compatibility; see docs/security.md.")
	fs.StringSliceVar(&o.ClusterExternalMetricsNamespaces, "autoscaler-cluster-external-metrics-namespaces", o.ClusterExternalMetricsNamespaces,
		"With --autoscaler-restrict-cluster-external-metrics, the namespaces whose PodAutoscalers may still read the external "+
			"metrics of rules marked namespaced: false, e.g. a platform team's.")
}

// Validate returns every problem with the options.
func (o *TenancyOptions) Validate() []error {
	if len(o.ClusterExternalMetricsNamespaces) > 0 && !o.RestrictClusterExternalMetrics {
		return []error{errors.New("--autoscaler-cluster-external-metrics-namespaces needs --autoscaler-restrict-cluster-external-metrics")}
	}
	return nil
}

// allows reports whether PodAutoscalers in namespace may read the external metric entry.
func (o *TenancyOptions) allows(entry served, namespace string) bool {
	return !entry.clusterWide || !o.RestrictClusterExternalMetrics || slices.Contains(o.ClusterExternalMetricsNamespaces, namespace)
}

// refused is the error of a read that o refuses: a 403 naming the metric, the namespace and why,
// wrapping ErrClusterExternalMetricRefused.
func (o *TenancyOptions) refused(metric, namespace string) error {
	cause := fmt.Errorf("%w: external metric %s is served by a rule marked namespaced: false, which reads every namespace's "+
		"series, and --autoscaler-restrict-cluster-external-metrics refuses it to namespace %q", ErrClusterExternalMetricRefused, metric, namespace)
	return refusedError{StatusError: apierrors.NewForbidden(externalResource(), metric, cause), cause: cause}
}

// refusedError is a 403 API status that unwraps to its cause.
type refusedError struct {
	*apierrors.StatusError
	cause error
}

func (e refusedError) Unwrap() error { return e.cause }

// PodAutoscalerReads is the Provider for the embedded autoscaler: FreshReads within the
// TenancyOptions. The autoscaler reads in-process, so no SubjectAccessReview applies to what
// it reads; these options are the only limit beyond the PodAutoscaler's namespace.
type PodAutoscalerReads struct {
	FreshReads
	tenancy *TenancyOptions
}

// PodAutoscalerReads returns the autoscaler's view of p within tenancy (nil: no limits).
func (p *Provider) PodAutoscalerReads(tenancy *TenancyOptions) PodAutoscalerReads {
	if tenancy == nil {
		tenancy = NewTenancyOptions()
	}
	return PodAutoscalerReads{FreshReads: p.FreshReads(), tenancy: tenancy}
}

// GetExternalMetric is FreshReads.GetExternalMetric, refusing what the tenancy options refuse.
func (r PodAutoscalerReads) GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return r.p.externalMetric(ctx, externalRead{namespace: namespace, selector: metricSel, info: info, tenancy: r.tenancy})
}

// LastExternalSample is FreshReads.LastExternalSample, refusing what the tenancy options refuse.
func (r PodAutoscalerReads) LastExternalSample(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (time.Time, error) {
	return r.lastExternalSample(ctx, namespace, metricSel, info, r.tenancy)
}
