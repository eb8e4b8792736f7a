package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// series strings per-phase replica counts into one series, a sample every tick
// from 0:00, as drive takes them.
func series(phases ...[]sample) []sample {
	var out []sample
	for _, p := range phases {
		for _, s := range p {
			s.at = time.Duration(len(out)) * tick
			out = append(out, s)
		}
	}
	return out
}

// phaseOf is one phase's samples with the given Deployment replicas.
func phaseOf(phase string, current ...int32) []sample {
	out := make([]sample, len(current))
	for i, c := range current {
		out[i] = sample{phase: phase, current: c, ready: c, desired: c}
	}
	return out
}

func TestProfile(t *testing.T) {
	const pastTheEnd = "past the end"
	tests := []struct {
		name      string
		elapsed   time.Duration
		wantQPS   float64
		wantPhase string
	}{
		{name: "the ramp starts from no load", elapsed: 0, wantQPS: 0, wantPhase: "ramp"},
		{name: "the ramp is linear: half way is half the peak", elapsed: 30 * time.Second, wantQPS: 6000, wantPhase: "ramp"},
		{name: "the ramp's last second is just under the peak", elapsed: 59 * time.Second, wantQPS: 11800, wantPhase: "ramp"},
		{name: "the hold starts at the peak when the ramp ends at 1:00", elapsed: time.Minute, wantQPS: 12000, wantPhase: "hold"},
		{name: "the hold stays at the peak", elapsed: 90 * time.Second, wantQPS: 12000, wantPhase: "hold"},
		{name: "the fall starts at the peak at 2:00", elapsed: 2 * time.Minute, wantQPS: 12000, wantPhase: "fall"},
		{name: "the fall is linear: half way is between peak and floor", elapsed: 135 * time.Second, wantQPS: 6500, wantPhase: "fall"},
		{name: "the settle starts at the floor at 2:30", elapsed: 150 * time.Second, wantQPS: 1000, wantPhase: "settle"},
		{name: "the settle stays at the floor until its last second", elapsed: 299 * time.Second, wantQPS: 1000, wantPhase: "settle"},
		{name: "the profile ends at 5:00 and reports the floor", elapsed: 5 * time.Minute, wantQPS: 1000, wantPhase: pastTheEnd},
		{name: "long past the end it still reports the floor", elapsed: time.Hour, wantQPS: 1000, wantPhase: pastTheEnd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qps, i := profile.At(tt.elapsed)
			phase := pastTheEnd
			if i < len(profile) {
				phase = profile[i].Name
			}
			if math.Abs(qps-tt.wantQPS) > 1e-6 || phase != tt.wantPhase {
				t.Errorf("profile.At(%v) = %v qps in %s (index %d), want %v qps in %s", tt.elapsed, qps, phase, i, tt.wantQPS, tt.wantPhase)
			}
		})
	}
}

func TestProfilePeakNeedsMoreThanMaxReplicas(t *testing.T) {
	var peak float64
	for _, p := range profile {
		peak = max(peak, p.From, p.To)
	}
	if floor := settleQPS(); peak <= maxReplicas*targetPerPod || floor > minReplicas*targetPerPod {
		t.Errorf("profile peaks at %v and settles at %v qps, want a peak above %d × %v and a floor within %d × %v",
			peak, floor, maxReplicas, targetPerPod, minReplicas, targetPerPod)
	}
}

func TestEveryPhaseIsExplainedWhenItStarts(t *testing.T) {
	if err := profile.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range profile {
		if !strings.HasPrefix(phaseAbout[p.Name], p.Name+": ") {
			t.Errorf("phase %s is explained as %q, want a line starting with %q", p.Name, phaseAbout[p.Name], p.Name+": ")
		}
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name    string
		samples []sample
		// wantErr is part of the failure's message; "" means the demo passed.
		wantErr string
	}{
		{
			name:    "scaled up to max during the hold and back to min: ok",
			samples: series(phaseOf("ramp", 1, 1, 2, 4), phaseOf("hold", 5, 5, 5), phaseOf("fall", 5, 4), phaseOf("settle", 2, 1)),
		},
		{
			name:    "exactly 4 during the hold and exactly 2 at the end is enough",
			samples: series(phaseOf("ramp", 1, 2), phaseOf("hold", 4, 4), phaseOf("fall", 4), phaseOf("settle", 2)),
		},
		{
			name:    "a hold peak of 3 is no scale-up",
			samples: series(phaseOf("ramp", 1, 2), phaseOf("hold", 3, 3), phaseOf("fall", 3), phaseOf("settle", 1)),
			wantErr: "vg1-vanguard peaked at 3 replicas during the hold, want at least 4",
		},
		{
			name:    "only the hold counts for the peak, not a later scale-up",
			samples: series(phaseOf("ramp", 1, 2), phaseOf("hold", 3), phaseOf("fall", 5), phaseOf("settle", 1)),
			wantErr: "peaked at 3 replicas during the hold, want at least 4",
		},
		{
			name:    "no sample in the hold means no scale-up",
			samples: series(phaseOf("ramp", 1, 5)),
			wantErr: "peaked at 0 replicas during the hold, want at least 4",
		},
		{
			name:    "ending at 3 is no scale-down",
			samples: series(phaseOf("ramp", 1, 4), phaseOf("hold", 5), phaseOf("fall", 5), phaseOf("settle", 4, 3)),
			wantErr: "vg1-vanguard ended at 3 replicas, want at most 2",
		},
		{
			name:    "the end is the last sample, not the lowest one",
			samples: series(phaseOf("ramp", 1, 4), phaseOf("hold", 5), phaseOf("settle", 1, 3)),
			wantErr: "ended at 3 replicas, want at most 2",
		},
		{
			name:    "with neither scale-up nor scale-down the missing scale-up is reported",
			samples: series(phaseOf("ramp", 1, 3), phaseOf("hold", 3), phaseOf("settle", 3)),
			wantErr: "peaked at 3 replicas during the hold",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&demo{samples: tt.samples}).verdict()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("verdict() = %v, want nil (exit %d)", err, exitOK)
				}
				return
			}
			if err == nil {
				t.Fatalf("verdict() = nil, want an error containing %q", tt.wantErr)
			}
			if !errors.Is(err, errNoScaling) {
				t.Errorf("verdict() = %v, want it to wrap errNoScaling (exit %d)", err, exitNoScaling)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("verdict() = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestRealVerdict(t *testing.T) {
	// serving marks every sample of a phase as its Ready pods each serving.
	serving := func(p []sample) []sample {
		for i := range p {
			p[i].servedOK, p[i].servedPods, p[i].servedMin = true, int(p[i].ready), 800
		}
		return p
	}
	// readyAt sets every sample of a phase to ready Ready pods.
	readyAt := func(ready int32, p []sample) []sample {
		for i := range p {
			p[i].ready = ready
		}
		return p
	}
	tests := []struct {
		name    string
		samples []sample
		wantErr string // "" means the demo passed
	}{
		{
			name:    "1→5→1 with all five pods Ready and serving during the hold: ok",
			samples: series(phaseOf("ramp", 1, 3), serving(phaseOf("hold", 5, 5)), phaseOf("fall", 5), phaseOf("settle", 2, 1)),
		},
		{
			name:    "4 during the hold is no longer enough on the real node: the example's maximum is 5",
			samples: series(phaseOf("ramp", 1, 3), serving(phaseOf("hold", 4, 4)), phaseOf("settle", 1)),
			wantErr: "vg1-vanguard peaked at 4 replicas during the hold, want 5",
		},
		{
			name:    "five replicas of which four ever became Ready is a failed start-up",
			samples: series(phaseOf("ramp", 1), serving(readyAt(4, phaseOf("hold", 5, 5))), phaseOf("settle", 1)),
			wantErr: "at most 4 of vg1-vanguard's 5 pods were Ready during the hold",
		},
		{
			name:    "a new pod that serves nothing means the Service never sent it traffic",
			samples: series(phaseOf("ramp", 1), phaseOf("hold", 5, 5), phaseOf("settle", 1)),
			wantErr: "vg1-vanguard's 5 pods never all served queries during the hold",
		},
		{
			name:    "ending at 2 is not back to the example's minimum of 1",
			samples: series(phaseOf("ramp", 1), serving(phaseOf("hold", 5)), phaseOf("settle", 3, 2)),
			wantErr: "vg1-vanguard ended at 2 replicas, want 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&demo{opts: options{node: nodeReal}, samples: tt.samples}).verdict()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("verdict() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, errNoScaling) || !strings.Contains(fmt.Sprint(err), tt.wantErr) {
				t.Errorf("verdict() = %v, want errNoScaling containing %q", err, tt.wantErr)
			}
		})
	}
}
