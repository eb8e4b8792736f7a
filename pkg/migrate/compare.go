package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/replay"
)

// ErrCompareFailed means --compare found a pair that differs beyond a one-step timing difference,
// or could not compare one (a refusal, or no recorded HPA history); Run returns it (wrapped) so
// that the command exits non-zero.
var ErrCompareFailed = errors.New("not every pair was shown to decide the same")

// Verdicts of a compared pair.
const (
	verdictSame       = "same"
	verdictTiming     = "same within one step"
	verdictDiffers    = "differs"
	verdictRefused    = "refused"
	verdictNoRecorded = "not compared: no recorded HPA history"
)

// withController sets m's algorithm settings to the kube-controller-manager flags the HPAs ran
// with, which the converted PodAutoscalers carry where their HPAs left them to the controller.
func withController(m replay.Model, f hpaconv.ControllerFlags) replay.Model {
	m.Config.Replicas.Tolerances = replicas.Tolerances{ScaleDown: f.Tolerance, ScaleUp: f.Tolerance}
	m.Config.Replicas.CPUInitializationPeriod = f.CPUInitializationPeriod
	m.Config.Replicas.DelayOfInitialReadinessStatus = f.InitialReadinessDelay
	m.Config.DownscaleStabilizationWindow = f.DownscaleStabilization
	return m
}

// compareAll replays each pair's PodAutoscaler in s and compares it with its HPA's record,
// writing one block per pair to w. It returns how many pairs were not shown the same.
func compareAll(ctx context.Context, s *replay.Session, f hpaconv.ControllerFlags, pairs []pair, w io.Writer) int {
	s.Model = withController(s.Model, f)
	fmt.Fprintf(w, "compare of %s to %s, one decision every %s: each PodAutoscaler replayed, against its HPA's recorded desired replicas\n",
		s.Window.From.UTC().Format(time.RFC3339), s.Window.To.UTC().Format(time.RFC3339), s.Window.Step)
	failed := 0
	for _, p := range pairs {
		fmt.Fprintf(w, "\nHorizontalPodAutoscaler %s/%s -> PodAutoscaler %s/%s\n", p.hpa.Namespace, p.hpa.Name, p.pa.Namespace, p.pa.Name)
		if !comparePair(ctx, s, p, w) {
			failed++
		}
	}
	return failed
}

// comparePair compares one pair and writes its block; false when it was not shown the same.
func comparePair(ctx context.Context, s *replay.Session, p pair, w io.Writer) bool {
	spec, err := replay.SpecOf(p.pa.Name, p.pa)
	if err == nil && p.hpa.Namespace == "" {
		err = errors.New("the HorizontalPodAutoscaler has no metadata.namespace, which the history is read in")
	}
	var c replay.HPAComparison
	if err == nil {
		c, err = s.CompareHPA(ctx, spec, p.hpa.Namespace, p.hpa.Name)
	}
	if err != nil {
		fmt.Fprintf(w, "  verdict: %s: %v\n", verdictRefused, err)
		return false
	}
	if !c.Recorded {
		fmt.Fprintf(w, "  verdict: %s (kube_horizontalpodautoscaler_status_desired_replicas has no sample in the window)\n", verdictNoRecorded)
		return false
	}
	fmt.Fprintf(w, "  steps compared: %d, differing: %d (%d beyond one step)\n", c.Compared, c.Differ, c.Beyond)
	for _, d := range c.First {
		reason := d.Reason
		if reason == "" {
			reason = "kept its replicas"
		}
		kind := "beyond"
		if d.Timing {
			kind = "timing"
		}
		fmt.Fprintf(w, "  %s  HPA %d  PodAutoscaler %d  %s: %s\n", d.Time.UTC().Format(time.RFC3339), d.HPA, d.PodAutoscaler, kind, reason)
	}
	switch {
	case c.Beyond > 0:
		fmt.Fprintf(w, "  verdict: %s\n", verdictDiffers)
		return false
	case c.Differ > 0:
		fmt.Fprintf(w, "  verdict: %s\n", verdictTiming)
	default:
		fmt.Fprintf(w, "  verdict: %s\n", verdictSame)
	}
	return true
}
