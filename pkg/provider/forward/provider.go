package forward

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"k8s.io/utils/clock"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// apiPath is the external metrics API's root, as the aggregator forwards to an adapter.
const apiPath = "/apis/external.metrics.k8s.io/v1beta1"

// ListInterval is how often the other adapter's metric list is fetched for discovery.
const ListInterval = 30 * time.Second

// Local is podpilot's own external-metrics provider, as the forwarder uses it.
type Local interface {
	provider.ExternalMetricsProvider
	// ServesExternal reports whether podpilot serves metric now; when it does not, err is the
	// error podpilot would answer with (a 404, or a 503 while its discovery is incomplete).
	ServesExternal(metric string) (served bool, err error)
}

// Config is what New needs.
type Config struct {
	Options Options
	// Local serves podpilot's own external metrics.
	Local Local
	// Authorizer is the API server's (delegated) authorizer: the caller of a forwarded request
	// must be allowed exactly what the aggregator checks for the other adapter.
	Authorizer authorizer.UnconditionalAuthorizer
	// Own is podpilot's own client config: forwarded requests carry its credentials.
	Own *rest.Config
	// Services resolves Options.Service's cluster IP (unused with Options.URL).
	Services corev1client.ServicesGetter
	// Registry registers podpilot_external_metrics_forward_errors_total.
	Registry metrics.KubeRegistry
	// Clock runs the list refresh loop; nil is the real clock.
	Clock clock.WithTicker
}

// Provider serves podpilot's own external metrics and forwards the rest to the other adapter.
type Provider struct {
	local   Local
	authz   authorizer.UnconditionalAuthorizer
	target  *target
	timeout time.Duration
	clock   clock.WithTicker
	errors  *metrics.CounterVec
	// remote is the other adapter's last fetched metric list.
	remote atomic.Pointer[[]provider.ExternalMetricInfo]
}

var _ provider.ExternalMetricsProvider = (*Provider)(nil)

// New builds the forwarding provider; nothing is fetched before Run.
func New(cfg Config) (*Provider, error) {
	if cfg.Local == nil || cfg.Authorizer == nil || cfg.Own == nil {
		return nil, errors.New("external metrics forward: local provider, authorizer and client config are required")
	}
	t, err := newTarget(cfg.Options, cfg.Own, cfg.Services)
	if err != nil {
		return nil, err
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	p := &Provider{local: cfg.Local, authz: cfg.Authorizer, target: t, timeout: cfg.Options.Timeout, clock: clk}
	if p.errors, err = newErrorsCounter(cfg.Registry); err != nil {
		return nil, err
	}
	return p, nil
}

// GetExternalMetric implements provider.ExternalMetricsProvider: a metric podpilot serves is
// answered by podpilot; any other is forwarded, once the caller is authorized, and the other
// adapter's answer or error is returned as it gave it. While podpilot's discovery is
// incomplete, a metric the other adapter does not know (404) gets podpilot's 503.
func (p *Provider) GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return p.read(ctx, p.local, namespace, metricSel, info, p.authorize)
}

// ExternalReads reads podpilot's own external metrics, e.g. the autoscaler's reads within its
// tenancy options.
type ExternalReads interface {
	GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error)
}

// ReadExternalMetric is the embedded autoscaler's read of a PodAutoscaler's external metric in
// its namespace: podpilot's own metrics through own, any other forwarded like GetExternalMetric.
// There is no caller to authorize: a PodAutoscaler reads in its own namespace only, what a
// HorizontalPodAutoscaler there reads through the aggregator with the HPA controller's access.
func (p *Provider) ReadExternalMetric(ctx context.Context, own ExternalReads, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return p.read(ctx, own, namespace, metricSel, info, func(context.Context) error { return nil })
}

// read answers a metric podpilot serves with own, and forwards any other once authorize passes.
func (p *Provider) read(ctx context.Context, own ExternalReads, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo,
	authorize func(context.Context) error) (*external_metrics.ExternalMetricValueList, error) {
	served, localErr := p.local.ServesExternal(info.Metric)
	if served {
		return own.GetExternalMetric(ctx, namespace, metricSel, info)
	}
	if err := authorize(ctx); err != nil {
		return nil, err
	}
	list, err := p.forward(ctx, namespace, metricSel, info.Metric)
	if apierrors.IsNotFound(err) && localErr != nil && !apierrors.IsNotFound(localErr) {
		return nil, localErr
	}
	return list, err
}

// authorize checks the caller for the request in ctx with the attributes the API server derived
// from it: for /apis/external.metrics.k8s.io/v1beta1/namespaces/NS/METRIC, list on resource
// METRIC of external.metrics.k8s.io in NS, what the kube-apiserver checks before its aggregator
// proxies to the APIService's adapter.
func (p *Provider) authorize(ctx context.Context) error {
	attrs, err := filters.GetAuthorizerAttributes(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("authorize forwarded external metric: %w", err))
	}
	decision, reason, err := p.authz.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Authorizing a forwarded external metric request failed", "metric", attrs.GetResource())
	}
	return responsewriters.ForbiddenStatusError(attrs, reason)
}

// forward sends the request to the other adapter with the caller's label selector as given.
func (p *Provider) forward(ctx context.Context, namespace string, metricSel labels.Selector, metric string) (*external_metrics.ExternalMetricValueList, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	query := url.Values{}
	if sel := rawSelector(ctx, metricSel); sel != "" {
		query.Set("labelSelector", sel)
	}
	a, err := p.target.get(ctx, path.Join(apiPath, "namespaces", namespace, metric), query)
	if err != nil {
		p.errors.WithLabelValues(opGet).Inc()
		// Counted; logged at V(2) only: every HPA on a forwarded metric would log each round.
		klog.FromContext(ctx).V(2).Info("Forwarding an external metric request failed", "metric", metric, "namespace", namespace, "err", err)
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("external metric %s in namespace %q: %v", metric, namespace, err))
	}
	list, err := decodeValues(a)
	if errors.Is(err, errBadAnswer) {
		p.errors.WithLabelValues(opGet).Inc()
		klog.FromContext(ctx).V(2).Info("Forwarded external metric answer unreadable", "metric", metric, "namespace", namespace, "err", err)
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("external metric %s in namespace %q: %v", metric, namespace, err))
	}
	klog.FromContext(ctx).V(4).Info("Forwarded external metric", "metric", metric, "namespace", namespace, "code", a.code)
	return list, err
}

// rawSelector is the labelSelector of the caller's request as it sent it (the API server keeps
// it for list requests), or else metricSel's canonical form.
func rawSelector(ctx context.Context, metricSel labels.Selector) string {
	if info, ok := request.RequestInfoFrom(ctx); ok && info.LabelSelector != "" {
		return info.LabelSelector
	}
	if metricSel == nil || metricSel.Empty() {
		return ""
	}
	return metricSel.String()
}
