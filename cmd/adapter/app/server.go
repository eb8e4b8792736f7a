package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
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

	srv, err := o.Adapter.Server()
	if err != nil {
		return fmt.Errorf("build API server: %w", err)
	}
	if err := srv.GenericAPIServer.PrepareRun().RunWithContext(ctx); err != nil {
		return fmt.Errorf("run API server: %w", err)
	}
	return nil
}
