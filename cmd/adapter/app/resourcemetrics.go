package app

import (
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"

	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
	"github.com/podpilot/podpilot/pkg/provider/resourcemetrics"
)

// installResourceMetrics serves metrics.k8s.io/v1beta1 from the rule file's resourceRules, on
// the same server and cluster cache as the custom and external metrics, from the backend the
// resourceRules name (p.ResourceClient).
func installResourceMetrics(o *Options, server *genericapiserver.GenericAPIServer, p *metricsapi.Provider,
	inf *clusterInformers) error {
	cfg, err := o.Adapter.Config() // the config Server() was built from (cached)
	if err != nil {
		return fmt.Errorf("API server config: %w", err)
	}
	if err := resourcemetrics.AddOpenAPIDefinitions(cfg.GenericConfig); err != nil {
		return fmt.Errorf("resource metrics OpenAPI: %w", err)
	}
	pods := inf.ForResource(podsResource())
	nodes := inf.ForResource(corev1.SchemeGroupVersion.WithResource("nodes"))
	rm, err := resourcemetrics.New(resourcemetrics.Config{
		Prometheus: p.ResourceClient(), Rules: p.ResourceQueries, Pods: pods.Lister(), Nodes: nodes.Lister(),
	})
	if err != nil {
		return fmt.Errorf("build resource metrics provider: %w", err)
	}
	if err := rm.Install(server); err != nil {
		return fmt.Errorf("install resource metrics API: %w", err)
	}
	return server.AddReadyzChecks(healthz.NamedCheck("resource-metrics-informers", func(*http.Request) error {
		if !pods.Informer().HasSynced() || !nodes.Informer().HasSynced() {
			return errors.New("pod and node informers have not synced")
		}
		return nil
	}))
}
