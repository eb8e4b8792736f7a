package app

import (
	"context"
	"fmt"
	"os"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	apimetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/metadata"
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
as an aggregated API, and runs an embedded autoscaler for PodAutoscaler resources.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			verflag.PrintAndExitIfRequested()
			if err := o.applyLogging(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return fmt.Errorf("invalid flags: %w", err)
			}
			return Run(server.SetupSignalContext(), o)
		},
		Args: cobra.NoArgs,
	}
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(os.Stdout)
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	return cmd
}

// Run serves podpilot until ctx is cancelled.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting podpilot", "version", version.Get().GitVersion)

	registry := metrics.NewKubeRegistry()
	provider, prom, meta, err := newProvider(o, registry)
	if err != nil {
		return err
	}
	o.Adapter.WithCustomMetrics(provider)
	o.Adapter.WithExternalMetrics(provider)
	// podpilot serves /metrics itself, from the apiserver's and its own registry;
	// the apiserver's request metrics (apiserver_request_*) are registered here.
	o.Adapter.EnableMetrics = false
	apimetrics.Register()
	srv, err := o.Adapter.Server()
	if err != nil {
		return fmt.Errorf("build API server: %w", err)
	}
	if err := srv.GenericAPIServer.AddReadyzChecks(provider.HealthChecker()); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	// metrics.k8s.io is served only when the rule file has resourceRules at start-up.
	if provider.ResourceQueries() != nil {
		if err := installResourceMetrics(o, srv.GenericAPIServer, provider, prom, meta); err != nil {
			return err
		}
		logger.Info("Serving metrics.k8s.io from the rule file's resourceRules")
	}
	srv.GenericAPIServer.Handler.NonGoRestfulMux.Handle("/metrics", promhttp.HandlerFor(
		promclient.Gatherers{legacyregistry.DefaultGatherer, registry}, promhttp.HandlerOpts{}))

	var scaler *autoscaler
	if o.Autoscaler.Enabled {
		restCfg, err := o.Adapter.ClientConfig()
		if err != nil {
			return fmt.Errorf("kubernetes client config: %w", err)
		}
		if scaler, err = newAutoscaler(o, restCfg, provider.FreshReads(), registry); err != nil {
			return err
		}
		if err := srv.GenericAPIServer.AddReadyzChecks(scaler.readyz()); err != nil {
			return fmt.Errorf("add readiness check: %w", err)
		}
		if err := srv.GenericAPIServer.AddLivezChecks(0, scaler.ctrl.Healthz()); err != nil {
			return fmt.Errorf("add liveness check: %w", err)
		}
	}

	// The API server stops last: it keeps serving until the autoscaler and
	// the provider have returned.
	serverCtx, stopServer := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServer()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return provider.Run(ctx) })
	if scaler != nil {
		g.Go(func() error { return scaler.Run(ctx) })
	}
	serverDone := make(chan error, 1)
	go func() {
		if err := srv.GenericAPIServer.PrepareRun().RunWithContext(serverCtx); err != nil {
			serverDone <- fmt.Errorf("run API server: %w", err)
		}
		close(serverDone)
	}()
	select {
	case err := <-serverDone:
		return err
	case <-ctx.Done():
	}
	err = g.Wait()
	stopServer()
	if serr := <-serverDone; serr != nil && err == nil {
		err = serr
	}
	return err
}

// newProvider builds the Prometheus-backed metrics provider shared by the API
// server and the autoscaler.
func newProvider(o *Options, registry metrics.KubeRegistry) (*metricsapi.Provider, prometheus.Client, metadata.Interface, error) {
	promCfg, err := o.Prometheus.Config()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("prometheus options: %w", err)
	}
	promMetrics, err := prometheus.NewMetrics(registry)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("register prometheus client metrics: %w", err)
	}
	prom, err := prometheus.New(promCfg, promMetrics)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("build prometheus client: %w", err)
	}
	mapper, err := o.Adapter.RESTMapper()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("build REST mapper: %w", err)
	}
	restCfg, err := o.Adapter.ClientConfig()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	meta, err := metadata.NewForConfig(restCfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("build metadata client: %w", err)
	}
	p, err := metricsapi.New(metricsapi.Config{
		Options: *o.Metrics, Prometheus: prom, Mapper: mapper, Metadata: meta, Registry: registry,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("build metrics provider: %w", err)
	}
	return p, prom, meta, nil
}
