package calendar

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // the windows' time zones resolve in any image, with or without /usr/share/zoneinfo

	"github.com/robfig/cron/v3"
)

var (
	// ErrInvalidStart means a window's start is not a valid five-field cron expression.
	ErrInvalidStart = errors.New("invalid cron start")
	// ErrInvalidTimeZone means a window's time zone is not an IANA time zone name.
	ErrInvalidTimeZone = errors.New("invalid time zone")
	// ErrInvalidDuration means a window's duration is not positive.
	ErrInvalidDuration = errors.New("duration must be positive")
)

// maxOccurrences bounds the starts walked back over one window's duration (a start every minute
// for a week is 10080): beyond it the window counts as active from the earliest start found.
const maxOccurrences = 20000

// Window is one schedule window as the spec gives it.
type Window struct {
	// Name identifies the window in status and events.
	Name string
	// Start is a five-field cron expression (minute hour day-of-month month day-of-week) or a
	// descriptor (@hourly, @daily, @weekly, @monthly, @yearly), read in TimeZone.
	Start string
	// TimeZone is an IANA time zone name; empty means UTC.
	TimeZone string
	// Duration is how long the window holds after each start, in elapsed time.
	Duration time.Duration
	// MinReplicas is the floor while the window is active.
	MinReplicas int32
}

// Occurrence is one activation of a window.
type Occurrence struct {
	// Name is the window's name.
	Name string
	// Start and End bound the activation: active at t when Start <= t < End.
	Start, End time.Time
	// MinReplicas is the window's floor.
	MinReplicas int32
}

// State is the calendar at one time.
type State struct {
	// Floor is the highest MinReplicas of the active windows, 0 when none is active.
	Floor int32
	// Active are the active occurrences, the highest floor first (then by name).
	Active []Occurrence
	// Next is the earliest occurrence starting after the time, nil when there is none.
	Next *Occurrence
}

// Calendar is a compiled list of windows.
type Calendar struct {
	windows []compiled
}

type compiled struct {
	Window
	schedule cron.Schedule
}

// parser reads the five standard fields and the calendar descriptors; seconds are not offered.
func parser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// Compile parses every window; the error joins one error per invalid window, naming it.
func Compile(windows []Window) (*Calendar, error) {
	c := &Calendar{windows: make([]compiled, 0, len(windows))}
	var errs []error
	for _, w := range windows {
		s, err := parse(w)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule window %q: %w", w.Name, err))
			continue
		}
		c.windows = append(c.windows, compiled{Window: w, schedule: s})
	}
	return c, errors.Join(errs...)
}

// parse compiles one window's start in its time zone.
func parse(w Window) (cron.Schedule, error) {
	if w.Duration <= 0 {
		return nil, fmt.Errorf("%s: %w", w.Duration, ErrInvalidDuration)
	}
	tz := w.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || strings.EqualFold(tz, "local") {
		return nil, fmt.Errorf("%q: %w", w.TimeZone, ErrInvalidTimeZone)
	}
	start := strings.TrimSpace(w.Start)
	// The time zone has its own field; @every counts from whenever it is asked, not from a calendar.
	if strings.HasPrefix(start, "TZ=") || strings.HasPrefix(start, "CRON_TZ=") || strings.HasPrefix(start, "@every") {
		return nil, fmt.Errorf("%q: TZ=, CRON_TZ= and @every are not accepted: %w", w.Start, ErrInvalidStart)
	}
	s, err := parser().Parse(start)
	if err != nil {
		return nil, fmt.Errorf("%q: %w: %w", w.Start, ErrInvalidStart, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q: %w", w.Start, ErrInvalidStart)
	}
	spec.Location = loc
	return spec, nil
}

// Validate checks windows as Compile does, for admission-like checks that keep no calendar.
func Validate(windows []Window) error {
	_, err := Compile(windows)
	return err
}

// At returns the calendar's state at now.
func (c *Calendar) At(now time.Time) State {
	var s State
	for _, w := range c.windows {
		if o, ok := w.active(now); ok {
			s.Active = append(s.Active, o)
			s.Floor = max(s.Floor, o.MinReplicas)
		}
		next := w.schedule.Next(now)
		if next.IsZero() {
			continue
		}
		if s.Next == nil || next.Before(s.Next.Start) {
			s.Next = &Occurrence{Name: w.Name, Start: next, End: next.Add(w.Duration), MinReplicas: w.MinReplicas}
		}
	}
	slices.SortFunc(s.Active, func(a, b Occurrence) int {
		if a.MinReplicas != b.MinReplicas {
			return int(b.MinReplicas - a.MinReplicas)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return s
}

// active returns w's occurrence holding at now: the starts within (now - Duration, now] make it
// active, from the earliest of them to the end of the latest.
func (w compiled) active(now time.Time) (Occurrence, bool) {
	first := w.schedule.Next(now.Add(-w.Duration))
	if first.IsZero() || first.After(now) {
		return Occurrence{}, false
	}
	last := first
	for range maxOccurrences {
		n := w.schedule.Next(last)
		if n.IsZero() || n.After(now) {
			break
		}
		last = n
	}
	return Occurrence{Name: w.Name, Start: first, End: last.Add(w.Duration), MinReplicas: w.MinReplicas}, true
}
