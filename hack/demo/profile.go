package main

import (
	"context"
	"fmt"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// phase is one stretch of the load profile: the total offered qps goes
// linearly from from to to over dur.
type phase struct {
	name     string
	dur      time.Duration
	from, to float64
	// about is printed when the phase starts.
	about string
}

// The load profile. The peak is above maxReplicas × target (5 × 2000), so the
// autoscaler runs into maxReplicas and says so (ScalingLimited
// TooManyReplicas); the floor of 1000 needs one pod.
var profile = []phase{
	{name: "ramp", dur: 60 * time.Second, from: 0, to: 12000,
		about: "ramp: 0 → 12000 qps over 60s (served qps lags: rate() looks back 1m)"},
	{name: "hold", dur: 60 * time.Second, from: 12000, to: 12000,
		about: "hold: 12000 qps for 60s, above 5 pods × 2000, so maxReplicas limits"},
	{name: "fall", dur: 30 * time.Second, from: 12000, to: 1000,
		about: "fall: 12000 → 1000 qps over 30s"},
	{name: "settle", dur: 150 * time.Second, from: 1000, to: 1000,
		about: "settle: 1000 qps until scaled down (30s downscale stabilization, at most 150s)"},
}

// tick is how often a table row is printed and a sample is kept.
const tick = 5 * time.Second

// offeredAt returns the total offered qps at elapsed into the profile and
// the index of its phase; past the end it returns len(profile).
func offeredAt(elapsed time.Duration) (float64, int) {
	var start time.Duration
	for i, p := range profile {
		if elapsed < start+p.dur {
			f := float64(elapsed-start) / float64(p.dur)
			return p.from + (p.to-p.from)*f, i
		}
		start += p.dur
	}
	last := profile[len(profile)-1]
	return last.to, len(profile)
}

// drive runs the load profile, updating the offered load every second and
// printing a row every tick, until the settle phase sees the workload back at
// minReplicas or the profile ends.
func (d *demo) drive(ctx context.Context) error {
	fmt.Fprintf(d.out, "\n%s\n", tableHeader())
	start := time.Now()
	every := time.NewTicker(time.Second)
	defer every.Stop()
	shown, nextRow := -1, time.Duration(0)
	for {
		elapsed := time.Since(start)
		total, i := offeredAt(elapsed)
		if i == len(profile) {
			return nil
		}
		d.load.Set(total)
		d.setUsage(ctx, total)
		if i != shown {
			fmt.Fprintf(d.out, "%s\n", phaseLine(profile[i].about))
			shown = i
		}
		if elapsed >= nextRow {
			s, err := d.takeSample(ctx, elapsed.Truncate(time.Second), profile[i].name, total)
			if err != nil {
				return err
			}
			d.samples = append(d.samples, s)
			fmt.Fprintln(d.out, tableRow(s))
			nextRow += tick
			if profile[i].name == "settle" && s.desired == minReplicas && s.current == minReplicas {
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

// setUsage makes each pod's cpu follow the qps it gets, if cpu and memory
// are exported at all.
func (d *demo) setUsage(ctx context.Context, total float64) {
	if d.usage == nil {
		return
	}
	pods, err := d.cluster.RunningPods(ctx, d.namespace, workload)
	if err != nil || len(pods) == 0 {
		return
	}
	d.usage.Set(cpuCores(framework.PerPod(total, len(pods))), podMemoryBytes)
}

// verdict checks that the run showed the scaling the demo is about.
func (d *demo) verdict() error {
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
