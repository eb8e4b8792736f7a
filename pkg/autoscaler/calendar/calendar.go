package calendar

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// stateTTL bounds how long a state is reused when no start or end is in sight (a start that
// robfig/cron finds no occurrence of within five years).
const stateTTL = 24 * time.Hour

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

// Calendar is a compiled list of windows. It keeps the last state it computed until the next
// change (the next start or an active occurrence's end), so a calendar read every round costs
// a comparison; it is safe for concurrent use.
type Calendar struct {
	windows []compiled

	mu     sync.Mutex
	cached State
	from   time.Time // cached holds for from <= now < until
	until  time.Time
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until.IsZero() || now.Before(c.from) || !now.Before(c.until) {
		c.cached, c.until = c.compute(now)
		c.from = now
	}
	return c.cached.clone()
}

// compute returns the state at now from the windows, and when it stops holding: the next start
// (a window becomes active, an active one gets a later end, the next one changes), the end of
// an active window's earliest occurrence still holding (its reported start moves on, or it
// ends), or stateTTL after now, whichever comes first.
func (c *Calendar) compute(now time.Time) (State, time.Time) {
	var s State
	until := now.Add(stateTTL)
	for _, w := range c.windows {
		if o, ok := w.active(now); ok {
			s.Active = append(s.Active, o)
			s.Floor = max(s.Floor, o.MinReplicas)
			if e := o.Start.Add(w.Duration); e.Before(until) {
				until = e
			}
		}
		next := w.schedule.Next(now)
		if next.IsZero() {
			continue
		}
		if next.Before(until) {
			until = next
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
	return s, until
}

// clone returns s with its own copies of Active and Next.
func (s State) clone() State {
	out := State{Floor: s.Floor, Active: slices.Clone(s.Active)}
	if s.Next != nil {
		n := *s.Next
		out.Next = &n
	}
	return out
}

// active returns w's occurrence holding at now: the starts within (now - Duration, now] make it
// active, from the earliest of them to the end of the latest. The earliest is one step of the
// schedule from now - Duration; the latest is found by bisecting (first, now] on whole seconds
// (cron starts fall on whole seconds), about 20 steps for 168h, however many starts the duration
// holds.
func (w compiled) active(now time.Time) (Occurrence, bool) {
	first := w.schedule.Next(now.Add(-w.Duration))
	if first.IsZero() || first.After(now) {
		return Occurrence{}, false
	}
	return Occurrence{Name: w.Name, Start: first, End: w.latest(first, now).Add(w.Duration), MinReplicas: w.MinReplicas}, true
}

// latest returns the latest start in [first, now], first being a start. It keeps lo with a start
// in (lo, now] (Next(lo) <= now) and hi with none in (hi, now]; once hi - lo <= 1s, (lo, hi]
// holds at most one whole second, so Next(lo) is that start and no later one is <= now.
func (w compiled) latest(first, now time.Time) time.Time {
	if n := w.schedule.Next(first); n.IsZero() || n.After(now) {
		return first
	}
	lo, hi := first, now
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n := w.schedule.Next(mid); !n.IsZero() && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return w.schedule.Next(lo)
}
