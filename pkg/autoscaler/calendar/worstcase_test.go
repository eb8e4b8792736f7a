package calendar

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
)

// worstAdmitted is the costliest spec.schedules admission allows: 20 windows starting every
// minute, each 168h long.
func worstAdmitted() []Window {
	ws := make([]Window, 0, 20)
	for i := range 20 {
		ws = append(ws, Window{Name: fmt.Sprintf("w%d", i), Start: "* * * * *", Duration: 168 * time.Hour, MinReplicas: int32(i + 1)})
	}
	return ws
}

// BenchmarkAtWorstAdmitted reads the worst admitted calendar once per round (every 15 s), as the
// controller does.
func BenchmarkAtWorstAdmitted(b *testing.B) {
	c, err := Compile(worstAdmitted())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 6, 15, 10, 0, 7, 0, time.UTC)
	b.ResetTimer()
	for i := range b.N {
		_ = c.At(now.Add(time.Duration(i) * 15 * time.Second))
	}
}

// BenchmarkComputeWorstAdmitted is the cost of one state of the worst admitted calendar
// without the cache (a round right after a start or an end).
func BenchmarkComputeWorstAdmitted(b *testing.B) {
	c, err := Compile(worstAdmitted())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 6, 15, 10, 0, 7, 0, time.UTC)
	b.ResetTimer()
	for i := range b.N {
		_, _ = c.compute(now.Add(time.Duration(i) * 15 * time.Second))
	}
}

// oracleAt is the calendar's former brute-force reading, kept as the oracle: every start within
// the duration is walked to find the latest.
func oracleAt(c *Calendar, now time.Time) State {
	var s State
	for _, w := range c.windows {
		first := w.schedule.Next(now.Add(-w.Duration))
		if !first.IsZero() && !first.After(now) {
			last := first
			for range 20000 {
				n := w.schedule.Next(last)
				if n.IsZero() || n.After(now) {
					break
				}
				last = n
			}
			s.Active = append(s.Active, Occurrence{Name: w.Name, Start: first, End: last.Add(w.Duration), MinReplicas: w.MinReplicas})
			s.Floor = max(s.Floor, w.MinReplicas)
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

func TestAtMatchesTheBruteForceOracle(t *testing.T) {
	tests := []struct {
		name    string
		windows []Window
	}{
		{name: "every minute for two days", windows: []Window{{Name: "m", Start: "* * * * *", Duration: 48 * time.Hour, MinReplicas: 2}}},
		{name: "every minute for 90 seconds", windows: []Window{{Name: "m", Start: "* * * * *", Duration: 90 * time.Second, MinReplicas: 2}}},
		{name: "every 7 minutes for 20 minutes", windows: []Window{{Name: "s", Start: "*/7 * * * *", Duration: 20 * time.Minute, MinReplicas: 2}}},
		{name: "hourly for 90 minutes", windows: []Window{{Name: "h", Start: "0 * * * *", Duration: 90 * time.Minute, MinReplicas: 2}}},
		{name: "business hours and lunch in Berlin", windows: []Window{
			{Name: "business", Start: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: 10 * time.Hour, MinReplicas: 4},
			{Name: "lunch", Start: "30 11 * * *", TimeZone: "Europe/Berlin", Duration: 2 * time.Hour, MinReplicas: 8}}},
		{name: "DST: every 15 minutes around the changes in New York", windows: []Window{
			{Name: "q", Start: "*/15 0-4 * * *", TimeZone: "America/New_York", Duration: 50 * time.Minute, MinReplicas: 3},
			{Name: "r", Start: "30 1 * * *", TimeZone: "America/New_York", Duration: 45 * time.Minute, MinReplicas: 6},
			{Name: "g", Start: "30 2 * * *", TimeZone: "America/New_York", Duration: 3 * time.Hour, MinReplicas: 5}}},
		{name: "DST: a half-hour zone (Lord Howe) every minute for 3 hours", windows: []Window{
			{Name: "lh", Start: "* 1-3 * * *", TimeZone: "Australia/Lord_Howe", Duration: 3 * time.Hour, MinReplicas: 2}}},
		{name: "two windows of one name (admission refuses them, the calendar does not care)", windows: []Window{
			{Name: "d", Start: "*/5 * * * *", Duration: 7 * time.Minute, MinReplicas: 2},
			{Name: "d", Start: "*/3 * * * *", Duration: 70 * time.Minute, MinReplicas: 3}}},
		{name: "weekly and monthly starts held for a week", windows: []Window{
			{Name: "w", Start: "@weekly", TimeZone: "Asia/Tokyo", Duration: 168 * time.Hour, MinReplicas: 2},
			{Name: "mo", Start: "0 0 1 * *", Duration: 100 * time.Hour, MinReplicas: 3}}},
	}
	// Rounds every 37 s 13 ms for six hours across both 2026 DST changes in the US, forwards then
	// backwards, on one calendar so that its cache is read as the controller reads it.
	starts := []time.Time{time.Date(2026, 3, 8, 4, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)}
	var times []time.Time
	for _, s := range starts {
		for i := range 600 {
			times = append(times, s.Add(time.Duration(i)*(37*time.Second+13*time.Millisecond)))
		}
	}
	times = append(times, times[len(times)/2:]...)
	slices.Reverse(times[len(times)*2/3:])
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := compile(t, tc.windows...)
			for _, now := range times {
				if diff := cmp.Diff(oracleAt(c, now), c.At(now)); diff != "" {
					t.Fatalf("At(%s) (-oracle +got):\n%s", now, diff)
				}
			}
		})
	}
}

// countingSchedule counts the schedule's steps.
type countingSchedule struct {
	cron.Schedule
	steps *int
}

func (s countingSchedule) Next(t time.Time) time.Time {
	*s.steps++
	return s.Schedule.Next(t)
}

func TestAtWorstAdmittedStepsAreBoundedByTheLogOfTheDuration(t *testing.T) {
	c := compile(t, worstAdmitted()...)
	steps := 0
	for i := range c.windows {
		c.windows[i].schedule = countingSchedule{Schedule: c.windows[i].schedule, steps: &steps}
	}
	now := time.Date(2026, 6, 15, 10, 0, 7, 0, time.UTC)
	st := c.At(now)
	if st.Floor != 20 || len(st.Active) != 20 {
		t.Fatalf("At() = floor %d with %d active, want 20 and 20", st.Floor, len(st.Active))
	}
	// A first start, a second, about log2(168h/1s) ≈ 20 bisection steps, the last and the next.
	if limit := 20 * 25; steps > limit {
		t.Errorf("At() took %d schedule steps for 20 windows, want at most %d", steps, limit)
	}
	before := steps
	for i := range 3 { // rounds within the same minute read the cache
		_ = c.At(now.Add(time.Duration(i) * 15 * time.Second))
	}
	if steps != before {
		t.Errorf("rounds before the next start took %d schedule steps, want 0 (the cached state)", steps-before)
	}
}
