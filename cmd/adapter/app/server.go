package app

import (
	"context"
	"fmt"
	"os"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	apimetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"

	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// NewCommand returns podpilot's root command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	fss := o.Flags()
	cmd := &cobra.Command{
		Use:   "podpilot",
		Short: "Prometheus metrics API server and embedded pod autoscaler for Kubernetes",
		Long: `podpilot serves custom.metrics.k8s.io and external.metrics.k8s.io from Prometheus
as an aggregated API, and runs an embedded autoscaler for PodAutoscaler resources.

podpilot replay replays PodAutoscaler specs over Prometheus history; see podpilot replay --help.
podpilot migrate converts HorizontalPodAutoscalers to PodAutoscalers and hands their targets over;
see podpilot migrate --help.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			if err := o.applyLogging(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return fmt.Errorf("invalid flags: %w", err)
			}
			ctx := server.SetupSignalContext()
			return Run(ctx, o, reloadOnSIGHUP(ctx))
		},
		Args: cobra.NoArgs,
	}
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(os.Stdout)
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	cmd.AddCommand(newReplayCommand(), newMigrateCommand())
	return cmd
}

// Run serves podpilot until ctx is cancelled. A receive on reload makes the provider re-read
// its rule file. Run returns only once everything it started has stopped; an API server that
// fails stops the provider and the autoscaler, and Run returns its error.
func Run(ctx context.Context, o *Options, reload <-chan struct{}) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting podpilot", "version", version.Get().GitVersion)

	restCfg, err := o.Adapter.ClientConfig()
	if err != nil {
		return fmt.Errorf("kubernetes client config: %w", err)
	}
	cache, err := newClusterInformers(restCfg)
	if err != nil {
		return err
	}
	registry := metrics.NewKubeRegistry()
	provider, err := newProvider(o, registry, cache, reload)
	if err != nil {
		return err
	}
	o.Adapter.WithCustomMetrics(provider)
	authz := &serverAuthorizer{}
	external, err := externalMetrics(ctx, o, restCfg, provider, registry, authz)
	if err != nil {
		return err
	}
	o.Adapter.WithExternalMetrics(external.api)
	// podpilot serves /metrics itself, from the apiserver's and its own registry;
	// the apiserver's request metrics (apiserver_request_*) are registered here.
	o.Adapter.EnableMetrics = false
	apimetrics.Register()
	srv, err := o.Adapter.Server()
	if err != nil {
		return fmt.Errorf("build API server: %w", err)
	}
	if err := authz.set(o); err != nil {
		return err
	}
	if err := addReadiness(o, srv.GenericAPIServer, provider, cache, restCfg); err != nil {
		return err
	}
	// metrics.k8s.io is served only when the rule file has resourceRules at start-up.
	if provider.ResourceQueries() != nil {
		if err := installResourceMetrics(o, srv.GenericAPIServer, provider, cache); err != nil {
			return err
		}
		logger.Info("Serving metrics.k8s.io from the rule file's resourceRules")
	}
	srv.GenericAPIServer.Handler.NonGoRestfulMux.Handle("/metrics", promhttp.HandlerFor(
		promclient.Gatherers{legacyregistry.DefaultGatherer, registry}, promhttp.HandlerOpts{}))

	l := lifecycle{
		server: func(ctx context.Context) error { return srv.GenericAPIServer.PrepareRun().RunWithContext(ctx) },
		cache:  cache,
		parts:  append([]func(context.Context) error{provider.Run}, external.parts()...),
	}
	if o.APIServices.Owner != "" {
		check, err := addAPIServiceCheck(o.APIServices, restCfg, registry, provider.ResourceQueries() != nil)
		if err != nil {
			return err
		}
		l.parts = append(l.parts, check)
	}
	if o.Autoscaler.Enabled {
		run, err := addAutoscaler(o, restCfg, external.reads(provider.PodAutoscalerReads(o.Tenancy)), registry, cache, srv.GenericAPIServer)
		if err != nil {
			return err
		}
		l.parts = append(l.parts, run)
	}
	return l.run(ctx)
}

// addAutoscaler builds the embedded autoscaler on the shared cache and reads (the provider's
// fresh reads within the tenancy options, and forwarded external metrics), adds its readiness
// and liveness checks to gs, and returns its Run.
func addAutoscaler(o *Options, restCfg *rest.Config, reads metricSources, registry metrics.KubeRegistry,
	cache *clusterInformers, gs *server.GenericAPIServer) (func(context.Context) error, error) {
	scaler, err := newAutoscaler(o, restCfg, reads, registry, cache.kube)
	if err != nil {
		return nil, err
	}
	if err := gs.AddReadyzChecks(scaler.readyz()); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	if err := gs.AddLivezChecks(0, scaler.ctrl.Healthz()); err != nil {
		return nil, fmt.Errorf("add liveness check: %w", err)
	}
	return scaler.Run, nil
}

// newProvider builds the Prometheus-backed metrics provider shared by the API
// server and the autoscaler: the default backend from the --prometheus-* flags, the rule
// file's backends derived from it (prometheus.Config.ForEndpoint), one client metrics set.
func newProvider(o *Options, registry metrics.KubeRegistry, inf metricsapi.Informers, reload <-chan struct{}) (*metricsapi.Provider, error) {
	promCfg, err := o.Prometheus.Config()
	if err != nil {
		return nil, fmt.Errorf("prometheus options: %w", err)
	}
	promMetrics, err := prometheus.NewMetrics(registry)
	if err != nil {
		return nil, fmt.Errorf("register prometheus client metrics: %w", err)
	}
	prom, err := prometheus.New(promCfg, promMetrics)
	if err != nil {
		return nil, fmt.Errorf("build prometheus client: %w", err)
	}
	mapper, err := o.Adapter.RESTMapper()
	if err != nil {
		return nil, fmt.Errorf("build REST mapper: %w", err)
	}
	backends := func(e prometheus.Endpoint) (prometheus.TenantClient, error) {
		cfg, err := promCfg.ForEndpoint(e)
		if err != nil {
			return nil, err
		}
		return prometheus.New(cfg, promMetrics)
	}
	p, err := metricsapi.New(metricsapi.Config{
		Options: *o.Metrics, Prometheus: prom, Backends: backends, Mapper: mapper, Informers: inf, Registry: registry, Reload: reload,
	})
	if err != nil {
		return nil, fmt.Errorf("build metrics provider: %w", err)
	}
	return p, nil
}
