package app

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/forward"
	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
)

// errNoAuthorizer means the API server has no authorizer to check forwarded requests with.
var errNoAuthorizer = errors.New("forwarding external metrics needs the API server's delegated authorization")

// serverAuthorizer is the API server's authorizer, which exists only once the server config is
// built, after the providers are chosen (the config's OpenAPI depends on them): set fills it in
// before the server serves.
type serverAuthorizer struct{ authz authorizer.Authorizer }

// Authorize implements authorizer.UnconditionalAuthorizer.
func (s *serverAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return s.authz.Authorize(ctx, a)
}

// set takes the authorizer of the built server config when forwarding (it is unused otherwise).
func (s *serverAuthorizer) set(o *Options) error {
	if !o.Forward.Enabled() {
		return nil
	}
	cfg, err := o.Adapter.Config() // the config Server() was built from (cached)
	if err != nil {
		return fmt.Errorf("API server config: %w", err)
	}
	if s.authz = cfg.GenericConfig.Authorization.Authorizer; s.authz == nil {
		return errNoAuthorizer
	}
	return nil
}

// externalSetup is what serves external metrics: podpilot's provider alone, or the forwarder in
// front of it (fwd, nil without --external-metrics-forward).
type externalSetup struct {
	api provider.ExternalMetricsProvider
	fwd *forward.Provider
}

// parts returns the forwarder's metric-list refresh, if forwarding.
func (e externalSetup) parts() []func(context.Context) error {
	if e.fwd == nil {
		return nil
	}
	return []func(context.Context) error{e.fwd.Run}
}

// reads returns the autoscaler's metric reads: own, with the external metrics no podpilot rule
// serves read from the other adapter when forwarding.
func (e externalSetup) reads(own metricsapi.PodAutoscalerReads) metricSources {
	if e.fwd == nil {
		return own
	}
	return forwardedReads{PodAutoscalerReads: own, fwd: e.fwd}
}

// forwardedReads are the autoscaler's reads with forwarded external metrics. The cadence and
// history of a forwarded metric are unknown (its rounds are not aligned with its scrapes, and it
// has no forecast).
type forwardedReads struct {
	metricsapi.PodAutoscalerReads
	fwd *forward.Provider
}

// GetExternalMetric reads podpilot's own external metrics within the tenancy options and
// forwards any other.
func (r forwardedReads) GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return r.fwd.ReadExternalMetric(ctx, r.PodAutoscalerReads, namespace, metricSel, info)
}

// externalMetrics returns what serves external.metrics.k8s.io: the provider, or, with
// --external-metrics-forward, the provider in front of the other adapter. Forwarded requests are
// authorized with authz.
func externalMetrics(ctx context.Context, o *Options, restCfg *rest.Config, p *metricsapi.Provider,
	registry metrics.KubeRegistry, authz *serverAuthorizer) (externalSetup, error) {
	if !o.Forward.Enabled() {
		return externalSetup{api: p}, nil
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return externalSetup{}, fmt.Errorf("kubernetes client for external metrics forward: %w", err)
	}
	fwd, err := forward.New(forward.Config{
		Options: *o.Forward, Local: p, Authorizer: authz, Own: restCfg, Services: client.CoreV1(), Registry: registry,
	})
	if err != nil {
		return externalSetup{}, fmt.Errorf("build external metrics forward: %w", err)
	}
	target := o.Forward.Service
	if target == "" {
		target = o.Forward.URL
	}
	klog.FromContext(ctx).Info("Forwarding the external metrics no podpilot rule serves", "target", target)
	return externalSetup{api: fwd, fwd: fwd}, nil
}
