package calendar

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func compile(t *testing.T, ws ...Window) *Calendar {
	t.Helper()
	c, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// floors returns the floor at each time.
func floors(c *Calendar, times ...time.Time) []int32 {
	out := make([]int32, 0, len(times))
	for _, t := range times {
		out = append(out, c.At(t).Floor)
	}
	return out
}

func TestFloor(t *testing.T) {
	ny := zone(t, "America/New_York")
	berlin := zone(t, "Europe/Berlin")
	business := Window{Name: "business", Start: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: 10 * time.Hour, MinReplicas: 4}
	lunch := Window{Name: "lunch", Start: "30 11 * * *", TimeZone: "Europe/Berlin", Duration: 2 * time.Hour, MinReplicas: 8}
	at := func(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 0, 0, loc)
	}
	tests := []struct {
		name    string
		windows []Window
		times   []time.Time
		want    []int32
	}{{
		name:    "a window holds its floor from its start, inclusive, to start + duration, exclusive",
		windows: []Window{business},
		times:   []time.Time{at(berlin, 2026, 6, 15, 7, 59), at(berlin, 2026, 6, 15, 8, 0), at(berlin, 2026, 6, 15, 17, 59), at(berlin, 2026, 6, 15, 18, 0)},
		want:    []int32{0, 4, 4, 0},
	}, {
		name:    "the cron start is read in the window's time zone, not UTC",
		windows: []Window{business},
		times:   []time.Time{time.Date(2026, 6, 15, 6, 0, 0, 0, time.UTC), time.Date(2026, 6, 15, 5, 59, 0, 0, time.UTC)},
		want:    []int32{4, 0},
	}, {
		name:    "overlapping windows: the highest active floor holds, and the lower one again once it ends",
		windows: []Window{business, lunch},
		times:   []time.Time{at(berlin, 2026, 6, 15, 11, 0), at(berlin, 2026, 6, 15, 12, 0), at(berlin, 2026, 6, 15, 13, 30), at(berlin, 2026, 6, 13, 12, 0)},
		want:    []int32{4, 8, 4, 8},
	}, {
		name:    "a window longer than its period stays active across its starts, to the end of the last one",
		windows: []Window{{Name: "hourly", Start: "0 * * * *", Duration: 90 * time.Minute, MinReplicas: 2}},
		times:   []time.Time{at(time.UTC, 2026, 6, 15, 10, 0), at(time.UTC, 2026, 6, 15, 10, 45), at(time.UTC, 2026, 6, 15, 11, 59)},
		want:    []int32{2, 2, 2},
	}, {
		name:    "a window crossing midnight holds into the next day",
		windows: []Window{{Name: "night", Start: "0 22 * * *", Duration: 4 * time.Hour, MinReplicas: 3}},
		times:   []time.Time{at(time.UTC, 2026, 6, 16, 1, 59), at(time.UTC, 2026, 6, 16, 2, 0)},
		want:    []int32{3, 0},
	}, {
		// As Kubernetes CronJob (the same parser): 02:30 does not exist on 2026-03-08 in New York,
		// so that day's window does not start; the day before and after it does.
		name:    "DST spring-forward: a start inside the skipped hour does not happen that day",
		windows: []Window{{Name: "gap", Start: "30 2 * * *", TimeZone: "America/New_York", Duration: time.Hour, MinReplicas: 5}},
		times:   []time.Time{at(ny, 2026, 3, 7, 2, 45), at(ny, 2026, 3, 8, 3, 15), at(ny, 2026, 3, 9, 2, 45)},
		want:    []int32{5, 0, 5},
	}, {
		name:    "DST spring-forward: a window's duration is elapsed time, so one that spans the change ends an hour later on the clock",
		windows: []Window{{Name: "span", Start: "0 1 * * *", TimeZone: "America/New_York", Duration: 2 * time.Hour, MinReplicas: 5}},
		times:   []time.Time{at(ny, 2026, 3, 8, 3, 59), at(ny, 2026, 3, 8, 4, 0), at(ny, 2026, 3, 9, 2, 59), at(ny, 2026, 3, 9, 3, 0)},
		want:    []int32{5, 0, 5, 0},
	}, {
		// 01:30 happens twice on 2026-11-01 in New York (EDT, then EST an hour later): the window
		// starts at both and holds from the first start to the end of the second.
		name:    "DST fall-back: a start in the repeated hour starts twice and the floor holds through both",
		windows: []Window{{Name: "repeat", Start: "30 1 * * *", TimeZone: "America/New_York", Duration: 45 * time.Minute, MinReplicas: 6}},
		times: []time.Time{time.Date(2026, 11, 1, 5, 29, 0, 0, time.UTC), time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),
			time.Date(2026, 11, 1, 6, 20, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC),
			time.Date(2026, 11, 1, 7, 14, 0, 0, time.UTC), time.Date(2026, 11, 1, 7, 15, 0, 0, time.UTC)},
		want: []int32{0, 6, 0, 6, 6, 0},
	}, {
		name:    "DST fall-back: a window read in UTC ignores the change",
		windows: []Window{{Name: "utc", Start: "30 5 * * *", Duration: 45 * time.Minute, MinReplicas: 6}},
		times:   []time.Time{time.Date(2026, 11, 1, 6, 20, 0, 0, time.UTC), time.Date(2026, 11, 2, 5, 30, 0, 0, time.UTC)},
		want:    []int32{0, 6},
	}, {
		name:    "descriptors: @daily starts at midnight in the time zone",
		windows: []Window{{Name: "daily", Start: "@daily", TimeZone: "Asia/Tokyo", Duration: time.Hour, MinReplicas: 2}},
		times:   []time.Time{time.Date(2026, 6, 15, 15, 30, 0, 0, time.UTC), time.Date(2026, 6, 15, 16, 0, 0, 0, time.UTC)},
		want:    []int32{2, 0},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, floors(compile(t, tc.windows...), tc.times...)); diff != "" {
				t.Errorf("floors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActiveAndNext(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	c := compile(t,
		Window{Name: "business", Start: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: 10 * time.Hour, MinReplicas: 4},
		Window{Name: "lunch", Start: "30 11 * * *", TimeZone: "Europe/Berlin", Duration: 2 * time.Hour, MinReplicas: 8},
		Window{Name: "batch", Start: "0 12 * * *", TimeZone: "Europe/Berlin", Duration: time.Hour, MinReplicas: 8},
	)
	day := func(h, m int) time.Time { return time.Date(2026, 6, 15, h, m, 0, 0, berlin) }
	tests := []struct {
		name string
		now  time.Time
		want State
	}{{
		name: "no window active: floor 0 and the next start",
		now:  day(7, 0),
		want: State{Next: &Occurrence{Name: "business", Start: day(8, 0), End: day(18, 0), MinReplicas: 4}},
	}, {
		name: "active windows are listed highest floor first, then by name; next is the earliest start after now",
		now:  day(12, 15),
		want: State{Floor: 8,
			Active: []Occurrence{{Name: "batch", Start: day(12, 0), End: day(13, 0), MinReplicas: 8},
				{Name: "lunch", Start: day(11, 30), End: day(13, 30), MinReplicas: 8},
				{Name: "business", Start: day(8, 0), End: day(18, 0), MinReplicas: 4}},
			Next: &Occurrence{Name: "business", Start: day(8, 0).AddDate(0, 0, 1), End: day(18, 0).AddDate(0, 0, 1), MinReplicas: 4}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.At(tc.now)); diff != "" {
				t.Errorf("At (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileRefusesInvalidWindows(t *testing.T) {
	tests := []struct {
		name   string
		window Window
		want   error
	}{
		{name: "six fields (seconds) are not offered", window: Window{Start: "0 0 8 * * *", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "an out-of-range hour is refused", window: Window{Start: "0 25 * * *", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "the time zone is its own field, not a TZ= prefix", window: Window{Start: "CRON_TZ=UTC 0 8 * * *", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "a bare TZ= prefix is refused, not a panic", window: Window{Start: "TZ=UTC", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "@every is not a calendar", window: Window{Start: "@every 1h", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "an empty start is refused", window: Window{Start: " ", Duration: time.Hour}, want: ErrInvalidStart},
		{name: "an unknown time zone is refused", window: Window{Start: "0 8 * * *", TimeZone: "Mars/Olympus", Duration: time.Hour}, want: ErrInvalidTimeZone},
		{name: "Local depends on the machine and is refused", window: Window{Start: "0 8 * * *", TimeZone: "Local", Duration: time.Hour}, want: ErrInvalidTimeZone},
		{name: "a zero duration is refused", window: Window{Start: "0 8 * * *"}, want: ErrInvalidDuration},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.window.Name = "w"
			c, err := Compile([]Window{tc.window, {Name: "ok", Start: "0 8 * * *", Duration: time.Hour, MinReplicas: 2}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Compile() error = %v, want %v", err, tc.want)
			}
			if got := len(c.windows); got != 1 {
				t.Errorf("the valid window is kept beside the invalid one: %d windows compiled, want 1", got)
			}
		})
	}
}
