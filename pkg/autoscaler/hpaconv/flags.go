package hpaconv

import (
	"fmt"
	"math"
	"time"
)

// ControllerFlags are the kube-controller-manager flags that set how its HPAs decide.
type ControllerFlags struct {
	// Tolerance is --horizontal-pod-autoscaler-tolerance.
	Tolerance float64
	// DownscaleStabilization is --horizontal-pod-autoscaler-downscale-stabilization.
	DownscaleStabilization time.Duration
	// SyncPeriod is --horizontal-pod-autoscaler-sync-period.
	SyncPeriod time.Duration
	// CPUInitializationPeriod is --horizontal-pod-autoscaler-cpu-initialization-period.
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay is --horizontal-pod-autoscaler-initial-readiness-delay.
	InitialReadinessDelay time.Duration
}

// UpstreamDefaults returns kube-controller-manager's defaults of the flags.
func UpstreamDefaults() ControllerFlags {
	return ControllerFlags{
		Tolerance:               0.1,
		DownscaleStabilization:  5 * time.Minute,
		SyncPeriod:              15 * time.Second,
		CPUInitializationPeriod: 5 * time.Minute,
		InitialReadinessDelay:   30 * time.Second,
	}
}

// Validate returns every value kube-controller-manager would not run with.
func (f ControllerFlags) Validate() []error {
	var errs []error
	if !(f.Tolerance >= 0) || math.IsInf(f.Tolerance, 1) {
		errs = append(errs, fmt.Errorf("the tolerance must be a finite number, not negative, got %g", f.Tolerance))
	}
	if f.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("the sync period must be positive, got %s", f.SyncPeriod))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"downscale stabilization", f.DownscaleStabilization}, {"cpu initialization period", f.CPUInitializationPeriod}, {"initial readiness delay", f.InitialReadinessDelay}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("the %s must not be negative, got %s", d.name, d.v))
		}
	}
	return errs
}

// ServerFlag is a podpilot server flag that carries a kube-controller-manager flag no
// PodAutoscaler field holds.
type ServerFlag struct {
	// Name is podpilot's flag, e.g. --autoscaler-sync-period.
	Name string
	// Value is the value to set it to.
	Value string
	// Upstream is the kube-controller-manager flag it carries.
	Upstream string
	// Applies says which PodAutoscalers it matters to.
	Applies string
}

// String returns "--name=value".
func (s ServerFlag) String() string { return s.Name + "=" + s.Value }

// ServerFlags returns the podpilot server flags that carry f, the first two the HPA's fixed-period
// rounds. The sync period, cpu
// initialization period and initial readiness delay have no PodAutoscaler field; the tolerance
// and the downscale stabilization window do, in behavior, which Convert fills in, except for an
// HPA without behavior: a behavior would replace the HPA's legacy scale-up limit (max(2 x
// current, 4) per sync) with the autoscaling/v2 default policies, so such PodAutoscalers take
// them from the server's flags, as the HPA took them from kube-controller-manager's.
func ServerFlags(f ControllerFlags) []ServerFlag {
	const all, noBehavior = "every PodAutoscaler", "PodAutoscalers without behavior (HPAs without behavior)"
	return []ServerFlag{
		{Name: "--autoscaler-sync-period", Value: f.SyncPeriod.String(), Upstream: "--horizontal-pod-autoscaler-sync-period", Applies: all},
		{Name: "--autoscaler-align-to-scrapes", Value: "false", Upstream: "--horizontal-pod-autoscaler-sync-period",
			Applies: all + ": rounds at a fixed period, as the HPA's (podpilot's default runs them just after the metrics' scrapes)"},
		{Name: "--autoscaler-cpu-initialization-period", Value: f.CPUInitializationPeriod.String(),
			Upstream: "--horizontal-pod-autoscaler-cpu-initialization-period", Applies: all},
		{Name: "--autoscaler-initial-readiness-delay", Value: f.InitialReadinessDelay.String(),
			Upstream: "--horizontal-pod-autoscaler-initial-readiness-delay", Applies: all},
		{Name: "--autoscaler-tolerance", Value: fmt.Sprint(f.Tolerance), Upstream: "--horizontal-pod-autoscaler-tolerance", Applies: noBehavior},
		{Name: "--autoscaler-downscale-stabilization", Value: f.DownscaleStabilization.String(),
			Upstream: "--horizontal-pod-autoscaler-downscale-stabilization", Applies: noBehavior},
	}
}
