package main

import (
	"context"
	"fmt"
	"time"

	"github.com/podpilot/podpilot/test/loadgen"
)

// profile is the demo's load profile. The peak is above maxReplicas × target
// (5 × 2000), so the autoscaler runs into maxReplicas and says so
// (ScalingLimited TooManyReplicas); the floor of 1000 needs one pod.
var profile = loadgen.Profile{
	{Name: "ramp", Duration: 60 * time.Second, From: 0, To: 12000},
	{Name: "hold", Duration: 60 * time.Second, From: 12000, To: 12000},
	{Name: "fall", Duration: 30 * time.Second, From: 12000, To: 1000},
	{Name: "settle", Duration: 150 * time.Second, From: 1000, To: 1000},
}

// phaseAbout is printed when each stage of the profile starts.
var phaseAbout = map[string]string{
	"ramp":   "ramp: 0 → 12000 qps over 60s (served qps lags: rate() looks back 1m)",
	"hold":   "hold: 12000 qps for 60s, above 5 pods × 2000, so maxReplicas limits",
	"fall":   "fall: 12000 → 1000 qps over 30s",
	"settle": "settle: 1000 qps until scaled down (30s downscale stabilization, at most 150s)",
}

// settleQPS is the rate the profile ends at, which --keep leaves running.
func settleQPS() float64 { return profile[len(profile)-1].To }

// tick is how often a table row is printed and a sample is kept.
const tick = 5 * time.Second

// drive runs the load profile, updating the offered load every second and
// printing a row every tick, until the settle phase sees the workload back at
// minReplicas or the profile ends.
func (d *demo) drive(ctx context.Context) error {
	fmt.Fprintf(d.out, "\n%s\n", tableHeader())
	start := time.Now()
	d.profileStart = start
	every := time.NewTicker(time.Second)
	defer every.Stop()
	shown, nextRow := -1, time.Duration(0)
	for {
		elapsed := time.Since(start)
		total, i := profile.At(elapsed)
		if i == len(profile) {
			return nil
		}
		d.load.offer(ctx, total)
		if i != shown {
			fmt.Fprintf(d.out, "%s\n", phaseLine(phaseAbout[profile[i].Name]))
			shown = i
		}
		if elapsed >= nextRow {
			s, err := d.takeSample(ctx, elapsed.Truncate(time.Second), profile[i].Name, total)
			if err != nil {
				return err
			}
			d.samples = append(d.samples, s)
			fmt.Fprintln(d.out, tableRow(s))
			nextRow += tick
			if profile[i].Name == "settle" && s.desired == minReplicas && s.current == minReplicas {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("run the load profile: %w", ctx.Err())
		case <-every.C:
		}
	}
}

// verdict checks that the run showed the scaling the demo is about. On the
// kwok node: a scale-up to at least 4 replicas during the hold and at most 2
// at the end. On the real node, where the pods are real, the whole story:
// 1→5→1, all 5 pods Ready during the hold, and each of them serving queries.
func (d *demo) verdict() error {
	if d.real() {
		return realVerdict(d.samples)
	}
	var peak int32
	end := d.samples[len(d.samples)-1].current
	for _, s := range d.samples {
		if s.phase == "hold" && s.current > peak {
			peak = s.current
		}
	}
	switch {
	case peak < 4:
		return fmt.Errorf("%w: %s peaked at %d replicas during the hold, want at least 4", errNoScaling, workload, peak)
	case end > 2:
		return fmt.Errorf("%w: %s ended at %d replicas, want at most 2", errNoScaling, workload, end)
	}
	return nil
}

// realVerdict is the verdict on the real node.
func realVerdict(samples []sample) error {
	var peak, peakReady int32
	served := false // a tick saw maxReplicas pods each serving queries
	for _, s := range samples {
		if s.phase != "hold" {
			continue
		}
		peak, peakReady = max(peak, s.current), max(peakReady, s.ready)
		served = served || (s.servedOK && s.servedPods >= maxReplicas && s.servedMin > 0)
	}
	end := samples[len(samples)-1]
	switch {
	case peak < maxReplicas:
		return fmt.Errorf("%w: %s peaked at %d replicas during the hold, want %d", errNoScaling, workload, peak, maxReplicas)
	case peakReady < maxReplicas:
		return fmt.Errorf("%w: at most %d of %s's %d pods were Ready during the hold", errNoScaling, peakReady, workload, maxReplicas)
	case !served:
		return fmt.Errorf("%w: %s's %d pods never all served queries during the hold", errNoScaling, workload, maxReplicas)
	case end.current > minReplicas:
		return fmt.Errorf("%w: %s ended at %d replicas, want %d", errNoScaling, workload, end.current, minReplicas)
	}
	return nil
}
