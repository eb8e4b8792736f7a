package app

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/term"

	"github.com/podpilot/podpilot/pkg/migrate"
)

// newMigrateCommand returns `podpilot migrate`: HorizontalPodAutoscalers to PodAutoscalers.
func newMigrateCommand() *cobra.Command {
	o := migrate.NewOptions()
	fss := o.Flags()
	cmd := &cobra.Command{
		Use:   "migrate (-f hpa.yaml ... | --from-cluster [--namespace=NS]) [--apply | --compare --prometheus-url=URL [--from=-24h --to=now]]",
		Short: "Convert HorizontalPodAutoscalers to their exact PodAutoscaler equivalents, and hand targets over",
		Long: `migrate reads autoscaling/v2 HorizontalPodAutoscalers (from files, or from the cluster) and
prints the equivalent PodAutoscalers as YAML on stdout, to commit or apply: the same target, bounds,
metrics, selectors and behavior, with the kube-controller-manager flags the HPAs ran with (--hpa-*,
upstream's defaults unless given) written into each behavior where the HPA leaves them to the
controller. They have spec.dryRun: true unless --dry-run-off: they run beside their HPAs and show in
status what they would decide. The podpilot server flags that carry the other kube-controller-manager
flags are printed on stderr.

What a PodAutoscaler cannot express exactly is refused, never approximated: each refusal is printed
on stderr naming the HPA, the field (e.g. spec.metrics[2].pods.target.type) and the reason, and
migrate then exits with status 1 (after printing every PodAutoscaler it could convert).

With --from-cluster --apply, each target is handed over from its HPA to its PodAutoscaler: created
in dryRun beside the HPA, its first decision awaited (--apply-wait), the HPA deleted, dryRun turned
off. Rerunning finishes any hand-over an interruption left. Exit status 1 if any HPA was refused or
any hand-over did not finish.

With --compare, instead of the YAML, each PodAutoscaler is replayed over Prometheus history (the
flags and the rule file of podpilot replay) and its desired replicas compared, step by step, with
its HPA's recorded ones (kube-state-metrics' kube_horizontalpodautoscaler_status_desired_replicas):
steps compared, steps that differ, the first few, and a verdict per pair. Exit status 1 unless
every pair was compared and agreed within one step. See docs/migrating-from-hpa.md.`,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return fmt.Errorf("invalid flags: %w", err)
			}
			return migrate.Run(server.SetupSignalContext(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	cols, _, _ := term.TerminalSize(os.Stdout)
	cliflag.SetUsageAndHelpFunc(cmd, fss, cols)
	return cmd
}
