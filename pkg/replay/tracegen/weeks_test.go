package tracegen

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestScrapedAnswersTheLastScrapeWhileYoungerThanTheLookback(t *testing.T) {
	nan := math.NaN()
	start := time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC)
	tr := Trace{Name: "t", Start: start, Step: time.Minute, Load: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}}
	tests := []struct {
		name              string
		cadence, lookback time.Duration
		want              []float64
	}{
		{name: "a lookback as long as the cadence answers every step with the last scrape",
			cadence: 3 * time.Minute, lookback: 3 * time.Minute, want: []float64{1, 1, 1, 4, 4, 4, 7, 7, 7}},
		{name: "a cadence longer than the lookback leaves the steps after the lookback without data",
			cadence: 4 * time.Minute, lookback: 2 * time.Minute, want: []float64{1, 1, nan, nan, 5, 5, nan, nan, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Scraped(tr, tt.cadence, tt.lookback)
			if diff := cmp.Diff(tt.want, got.Load, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Scraped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheHolidayWeekRunsTheWeekendPatternOnItsHolidaysOnly(t *testing.T) {
	sc := HolidayWeekScenario(time.Minute)
	tr, err := sc.Make()
	if err != nil {
		t.Fatal(err)
	}
	at10 := func(d int) float64 { return tr.At(sc.From.AddDate(0, 0, d).Add(10 * time.Hour)) }
	// At 10:00 a weekday is near its peak and a weekend day (or holiday) below half of it.
	for d, holiday := range map[int]bool{0: false, 1: false, 2: true, 3: true, 4: true, 7: false, 9: false, 10: false, 11: false} {
		if got := at10(d) < 0.6*at10(0); got != holiday {
			t.Errorf("day %d (%s): load at 10:00 %.0f, Monday's %.0f: runs the weekend pattern %v, want %v",
				d, sc.From.AddDate(0, 0, d).Weekday(), at10(d), at10(0), got, holiday)
		}
	}
	if len(sc.Holidays) != 3 || !sc.To.Equal(sc.From.Add(14*24*time.Hour-time.Minute)) {
		t.Errorf("holidays %v, window %s to %s: want three holidays and two weeks", sc.Holidays, sc.From, sc.To)
	}
}
