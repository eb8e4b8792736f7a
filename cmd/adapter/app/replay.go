package app

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/term"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/replay"
)

// newReplayCommand returns `podpilot replay`: PodAutoscaler specs replayed over Prometheus history.
func newReplayCommand() *cobra.Command {
	o := replay.NewOptions()
	fss := o.Flags()
	cmd := &cobra.Command{
		Use:   "replay --prometheus-url=URL --namespace=NS --from=-24h --to=now -f ppa.yaml [-f other.yaml ...] [--out=DIR]",
		Short: "Replay PodAutoscaler specs over a workload's Prometheus history",
		Long: `replay reads a workload's metrics and replicas from Prometheus (query_range, through the same
rules the server uses) and replays each PodAutoscaler's decisions with the real algorithm and a
simulated clock. It prints a summary per spec (replica-hours, time and pod-seconds above target,
scale events, a self-check against the real replicas) and writes a table and an SVG chart per
spec into --out. A spec with spec.prediction is replayed three ways side by side: reactive (the
metrics alone), predictive (with the forecast, fitted on the history before each refit) and
oracle (with the real load one lead time ahead), with the forecast's WAPE beside seasonal-naive's;
spec.schedules apply to all three. It needs no cluster.`,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return replay.Run(server.SetupSignalContext(), o, clock.RealClock{}, cmd.OutOrStdout())
		},
	}
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(os.Stdout)
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	return cmd
}
