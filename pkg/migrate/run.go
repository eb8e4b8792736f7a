package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/clock"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
	"github.com/podpilot/podpilot/pkg/replay"
)

// ErrIncomplete means some HPAs were refused, or some hand-overs did not finish; Run returns it
// (wrapped) so that the command exits non-zero.
var ErrIncomplete = errors.New("not every HorizontalPodAutoscaler was migrated")

// pair is an HPA and its converted PodAutoscaler.
type pair struct {
	hpa *autoscalingv2.HorizontalPodAutoscaler
	pa  *podpilotv1alpha1.PodAutoscaler
}

// Run runs `podpilot migrate` with o: YAML of the PodAutoscalers on stdout (or, with --apply,
// one line per step of each hand-over), refusals and the server flags to set on stderr.
func Run(ctx context.Context, o *Options, stdin io.Reader, stdout, stderr io.Writer) error {
	var c *Clients
	if o.FromCluster {
		var err error
		if c, err = NewClients(o); err != nil {
			return err
		}
	}
	return run(ctx, o, c, stdin, stdout, stderr)
}

func run(ctx context.Context, o *Options, c *Clients, stdin io.Reader, stdout, stderr io.Writer) error {
	var hpas []*autoscalingv2.HorizontalPodAutoscaler
	var err error
	if o.FromCluster {
		hpas, err = listHPAs(ctx, c.Kube, o.Namespace)
	} else {
		hpas, err = readFiles(o, stdin)
	}
	if err != nil {
		return err
	}
	pairs, refused := convertAll(hpas, o, stderr)
	pairs, shared := refuseSharedTargets(pairs, stderr)
	refused += shared
	if len(pairs) > 0 {
		printServerFlags(stderr, o.Controller)
	}
	failed := 0
	if o.Compare {
		return compareRun(ctx, o, c, pairs, refused, len(hpas), stdout)
	}
	if o.Apply {
		failed = newApplier(o, c, stdout).applyAll(ctx, pairs)
	} else if err := writeYAML(stdout, pairs); err != nil {
		return err
	}
	switch {
	case failed > 0:
		return fmt.Errorf("%d of %d HorizontalPodAutoscalers refused, %d hand-overs not finished: %w", refused, len(hpas), failed, ErrIncomplete)
	case refused > 0:
		return fmt.Errorf("%d of %d HorizontalPodAutoscalers refused: %w", refused, len(hpas), ErrIncomplete)
	}
	return nil
}

// compareRun is run's --compare: the report on stdout instead of the YAML.
func compareRun(ctx context.Context, o *Options, c *Clients, pairs []pair, refused, total int, stdout io.Writer) error {
	var src replay.Source
	if c != nil {
		src = c.History
	}
	s, err := o.Replay.NewSession(clock.RealClock{}, src)
	if err != nil {
		return fmt.Errorf("--compare: %w", err)
	}
	failed := compareAll(ctx, s, o.Controller, pairs, stdout)
	switch {
	case failed > 0:
		return fmt.Errorf("%d of %d HorizontalPodAutoscalers refused, %d of %d pairs not shown to decide the same: %w",
			refused, total, failed, len(pairs), ErrCompareFailed)
	case refused > 0:
		return fmt.Errorf("%d of %d HorizontalPodAutoscalers refused: %w", refused, total, ErrIncomplete)
	}
	return nil
}

// convertAll converts each HPA, printing each refusal to stderr.
func convertAll(hpas []*autoscalingv2.HorizontalPodAutoscaler, o *Options, stderr io.Writer) ([]pair, int) {
	var out []pair
	refused := 0
	for _, h := range hpas {
		pa, err := hpaconv.Convert(h, &o.Controller)
		if err != nil {
			fmt.Fprintf(stderr, "refused: %v\n", err)
			refused++
			continue
		}
		pa.Spec.DryRun = !o.DryRunOff
		out = append(out, pair{hpa: h, pa: pa})
	}
	return out, refused
}

// writeYAML writes the PodAutoscalers as one YAML stream.
func writeYAML(w io.Writer, pairs []pair) error {
	for _, p := range pairs {
		data, err := hpaconv.YAML(p.pa)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return fmt.Errorf("write PodAutoscaler %s/%s: %w", p.pa.Namespace, p.pa.Name, err)
		}
	}
	return nil
}

// printServerFlags says which podpilot server flags carry the kube-controller-manager flags.
func printServerFlags(w io.Writer, f hpaconv.ControllerFlags) {
	fmt.Fprintln(w, "Set on the podpilot server, for the same kube-controller-manager settings:")
	for _, s := range hpaconv.ServerFlags(f) {
		fmt.Fprintf(w, "  %-45s # %s; %s\n", s.String(), s.Upstream, s.Applies)
	}
}
