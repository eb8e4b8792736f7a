package loadgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxQPS bounds the rate of any stage: this generator is for a demo on a
// shared machine, not a stress test.
const MaxQPS = 100000

// ErrProfile means a load profile is malformed.
var ErrProfile = errors.New("invalid load profile")

// Stage is one stretch of a load profile: the offered queries per second go
// linearly from From to To over Duration.
type Stage struct {
	Name     string
	Duration time.Duration
	From, To float64
}

// Profile is a load profile: its stages, one after the other.
type Profile []Stage

// Duration is the length of the whole profile.
func (p Profile) Duration() time.Duration {
	var d time.Duration
	for _, s := range p {
		d += s.Duration
	}
	return d
}

// At returns the offered queries per second at elapsed into the profile and
// the index of its stage; past the end it returns the last stage's To and
// len(p).
func (p Profile) At(elapsed time.Duration) (float64, int) {
	var start time.Duration
	for i, s := range p {
		if elapsed < start+s.Duration {
			f := float64(elapsed-start) / float64(s.Duration)
			return s.From + (s.To-s.From)*f, i
		}
		start += s.Duration
	}
	if len(p) == 0 {
		return 0, 0
	}
	return p[len(p)-1].To, len(p)
}

// Queries returns how many queries the profile offers from its start until
// elapsed (the integral of its rate), and no more past its end.
func (p Profile) Queries(elapsed time.Duration) float64 {
	var total float64
	var start time.Duration
	for _, s := range p {
		t := min(max(elapsed-start, 0), s.Duration).Seconds()
		// The rate is From + (To-From)·t/d; its integral over [0, t].
		total += s.From*t + (s.To-s.From)*t*t/(2*s.Duration.Seconds())
		start += s.Duration
	}
	return total
}

// Validate checks that every stage lasts and its rates are from 0 to MaxQPS.
func (p Profile) Validate() error {
	if len(p) == 0 {
		return fmt.Errorf("%w: no stages", ErrProfile)
	}
	var errs []error
	for i, s := range p {
		if s.Duration <= 0 {
			errs = append(errs, fmt.Errorf("%w: stage %d (%s) lasts %s, want more than 0", ErrProfile, i+1, s.Name, s.Duration))
		}
		for _, v := range []float64{s.From, s.To} {
			if !(v >= 0 && v <= MaxQPS) { // also catches NaN
				errs = append(errs, fmt.Errorf("%w: stage %d (%s) rate %g is not from 0 to %d", ErrProfile, i+1, s.Name, v, MaxQPS))
			}
		}
	}
	return errors.Join(errs...)
}

// ParseProfile reads a profile written as comma-separated stages
// FROM[-TO]:DURATION, e.g. "0-6000:30s,6000:60s,6000-500:30s" (ramp up,
// hold, fall). Each stage is named ramp, hold or fall after its direction.
func ParseProfile(spec string) (Profile, error) {
	var p Profile
	for i, part := range strings.Split(spec, ",") {
		rates, dur, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("%w: stage %d %q is not FROM[-TO]:DURATION", ErrProfile, i+1, part)
		}
		d, err := time.ParseDuration(dur)
		if err != nil {
			return nil, fmt.Errorf("%w: stage %d %q: %w", ErrProfile, i+1, part, err)
		}
		fromS, toS, ramped := strings.Cut(rates, "-")
		from, err := strconv.ParseFloat(fromS, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: stage %d %q: %w", ErrProfile, i+1, part, err)
		}
		to := from
		if ramped {
			if to, err = strconv.ParseFloat(toS, 64); err != nil {
				return nil, fmt.Errorf("%w: stage %d %q: %w", ErrProfile, i+1, part, err)
			}
		}
		p = append(p, Stage{Name: stageName(from, to), Duration: d, From: from, To: to})
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func stageName(from, to float64) string {
	switch {
	case to > from:
		return "ramp"
	case to < from:
		return "fall"
	}
	return "hold"
}
