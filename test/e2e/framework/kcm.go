package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HPAControllerSettings are the kube-controller-manager settings the stock
// HPA's algorithm depends on.
type HPAControllerSettings struct {
	SyncPeriod              time.Duration
	Tolerance               float64
	DownscaleStabilization  time.Duration
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
}

// hpaControllerFlags maps kube-controller-manager's HPA flags to where they
// go in HPAControllerSettings.
var hpaControllerFlags = map[string]func(*HPAControllerSettings, string) error{
	"horizontal-pod-autoscaler-sync-period":               durationInto(func(s *HPAControllerSettings) *time.Duration { return &s.SyncPeriod }),
	"horizontal-pod-autoscaler-downscale-stabilization":   durationInto(func(s *HPAControllerSettings) *time.Duration { return &s.DownscaleStabilization }),
	"horizontal-pod-autoscaler-cpu-initialization-period": durationInto(func(s *HPAControllerSettings) *time.Duration { return &s.CPUInitializationPeriod }),
	"horizontal-pod-autoscaler-initial-readiness-delay":   durationInto(func(s *HPAControllerSettings) *time.Duration { return &s.InitialReadinessDelay }),
	"horizontal-pod-autoscaler-tolerance": func(s *HPAControllerSettings, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		s.Tolerance = f
		return err
	},
}

func durationInto(field func(*HPAControllerSettings) *time.Duration) func(*HPAControllerSettings, string) error {
	return func(s *HPAControllerSettings, v string) error {
		d, err := time.ParseDuration(v)
		*field(s) = d
		return err
	}
}

// HPAController reads the HPA settings of the cluster's running
// kube-controller-manager from its command line; flags it was not given
// take upstream's defaults.
func (c *Cluster) HPAController() (HPAControllerSettings, error) {
	s := HPAControllerSettings{ // kube-controller-manager's defaults
		SyncPeriod: 15 * time.Second, Tolerance: 0.1, DownscaleStabilization: 5 * time.Minute,
		CPUInitializationPeriod: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second,
	}
	b, err := os.ReadFile(filepath.Join(c.StateDir, "pids", "kube-controller-manager.pid"))
	if err != nil {
		return s, fmt.Errorf("read kube-controller-manager pid: %w", err)
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(b)), "cmdline"))
	if err != nil {
		return s, fmt.Errorf("read kube-controller-manager command line: %w", err)
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		set, ok := hpaControllerFlags[name]
		if !ok {
			continue
		}
		if !inline && i+1 < len(args) {
			i++
			value = args[i]
		}
		if err := set(&s, value); err != nil {
			return s, fmt.Errorf("kube-controller-manager --%s=%s: %w", name, value, err)
		}
	}
	return s, nil
}

// PodpilotArgs are the --autoscaler-* flags that give podpilot's autoscaler
// the same settings, rounds at a fixed period included, as the stock HPA's.
func (s HPAControllerSettings) PodpilotArgs() []string {
	return []string{
		"--autoscaler-align-to-scrapes=false",
		"--autoscaler-sync-period=" + s.SyncPeriod.String(),
		"--autoscaler-tolerance=" + strconv.FormatFloat(s.Tolerance, 'g', -1, 64),
		"--autoscaler-downscale-stabilization=" + s.DownscaleStabilization.String(),
		"--autoscaler-cpu-initialization-period=" + s.CPUInitializationPeriod.String(),
		"--autoscaler-initial-readiness-delay=" + s.InitialReadinessDelay.String(),
	}
}
