package tracegen

import (
	"math"
	"time"
)

// HolidayWeekScenario is a holiday week followed by an ordinary one, both replayed: from Monday
// 2026-11-02, Wednesday to Friday run the weekend's pattern (three holidays in a row, as around
// Christmas), then the next week, Monday 2026-11-09 to Sunday 2026-11-15, is ordinary. Its four
// weeks of history hold the past holiday of the other scenarios. It measures the cost of the
// holidays and whether the ordinary days after them return to the ordinary cost.
func HolidayWeekScenario(step time.Duration) Scenario {
	mon := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	s := baseSpec("holiday-week", 10, mon, step)
	s.Span = History + 14*24*time.Hour
	holidays := []time.Time{mon.AddDate(0, 0, 2), mon.AddDate(0, 0, 3), mon.AddDate(0, 0, 4)}
	s.Holidays = append(s.Holidays, holidays...)
	return Scenario{Name: s.Name, About: "a week with three holidays (Wednesday to Friday) then an ordinary week, both replayed",
		Make: func() (Trace, error) { return Generate(s), nil }, From: mon, To: mon.Add(14*24*time.Hour - step), Holidays: holidays}
}

// SlowGaugeScenario is the diurnal weekday read from a gauge scraped only every cadence, as
// Prometheus answers an instant query: a step sees the last scrape's value while it is younger
// than lookback (Prometheus's default is 5 minutes), and no data after. With a cadence of 10
// minutes and a lookback of 5, half of the steps have no data.
func SlowGaugeScenario(step, cadence, lookback time.Duration) Scenario {
	s := baseSpec("slow-gauge", 6, scenarioDay(), step)
	sc := replayedDay(s, "the diurnal weekday read from a gauge scraped every "+cadence.String()+
		", which Prometheus answers for "+lookback.String()+" after each scrape")
	sc.Make = func() (Trace, error) { return Scraped(Generate(s), cadence, lookback), nil }
	return sc
}

// Scraped is tr as a gauge scraped every cadence from tr.Start reads at tr's steps: the value of
// the last scrape at or before the step while it is younger than lookback, NaN after.
func Scraped(tr Trace, cadence, lookback time.Duration) Trace {
	out := Trace{Name: tr.Name, Start: tr.Start, Step: tr.Step, Load: make([]float64, len(tr.Load))}
	for i := range tr.Load {
		since := time.Duration(i) * tr.Step
		scrape := since.Truncate(cadence)
		out.Load[i] = math.NaN()
		if since-scrape < lookback {
			out.Load[i] = tr.Load[int(scrape/tr.Step)]
		}
	}
	return out
}
