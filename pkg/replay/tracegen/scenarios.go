package tracegen

import "time"

// Scenario is a trace and the day replayed over it; the trace starts History before From, so a
// forecast fitted at From has that much history.
type Scenario struct {
	// Name names the scenario.
	Name string
	// About says in a few words what it tests.
	About string
	// Make generates the trace, from History before From to To.
	Make func() (Trace, error)
	// From and To bound the replayed window.
	From, To time.Time
	// Holidays are the holidays within the replayed window, for the reports; nil without any.
	Holidays []time.Time
}

// History is the history before each scenario's replayed day.
const History = 28 * 24 * time.Hour

// Scenarios are the synthetic traces predictive scaling is measured on: a weekday, a weekend
// day, a holiday, a weekday with an unforecastable spike, one whose history has outliers, the
// real flights and a weakly seasonal weekday,
// each after four weeks of history
// with noise, a 2%/week trend and a past holiday. Step is the trace's resolution (the sync period).
func Scenarios(step time.Duration) []Scenario {
	wed := scenarioDay()
	diurnal := baseSpec("diurnal", 1, wed, step)
	weekend := baseSpec("weekend", 2, wed.AddDate(0, 0, 3), step)
	holiday := baseSpec("holiday", 3, wed.AddDate(0, 0, 1), step)
	holiday.Holidays = append(holiday.Holidays, wed.AddDate(0, 0, 1))
	return []Scenario{
		replayedDay(diurnal, "a weekday: ramps at 08:00 (3 min) and 13:00 (5 min)"),
		replayedDay(weekend, "a Saturday: the weekly pattern (a later, smaller ramp at 10:00)"),
		replayedDay(holiday, "a weekday that runs a Sunday's pattern: the forecast expects a workday"),
		SpikeScenario(step, 4),
		OutliersScenario(step),
		FlightsScenario(step),
		WeakScenario(step),
	}
}

// WeakScenario is a weekday of a weakly seasonal load: 60% of the peak flat, the daily pattern
// on the rest, and 35% noise, so that the season explains about 40% of the variance (a fit on
// its one-minute history measures 40%, above forecast.MinSeasonalStrength, and a headroom of 32%),
// as in the weakly seasonal real series of issue 30 (40%, headroom 33%). The forecast should add
// nothing there and step aside.
func WeakScenario(step time.Duration) Scenario {
	s := baseSpec("weak", 9, scenarioDay(), step)
	s.Flat, s.Noise = 0.6, 0.35
	return replayedDay(s, "a weekday of a weakly seasonal load: the daily pattern explains about 40% of the variance")
}

// OutliersScenario is a weekday whose history holds single minutes at 100× the peak at the times
// of day its ramps and peak come: 08:02 five days before, 13:03 a week before and 15:00 twelve
// days before. The forecast of those times must not follow them.
func OutliersScenario(step time.Duration) Scenario {
	day := scenarioDay()
	s := baseSpec("outliers", 5, day, step)
	s.Outliers = []Outlier{
		{At: day.AddDate(0, 0, -5).Add(8*time.Hour + 2*time.Minute), Factor: 100},
		{At: day.AddDate(0, 0, -7).Add(13*time.Hour + 3*time.Minute), Factor: 100},
		{At: day.AddDate(0, 0, -12).Add(15 * time.Hour), Factor: 100},
	}
	return replayedDay(s, "a weekday whose history has three minutes at 100x the peak at its ramps' and peak's times of day")
}

// SpikeScenario is the spike scenario with the noise of seed: a weekday with a 2.5× burst at
// 15:00 for 20 minutes that no history announces. Scenarios has it with seed 4.
func SpikeScenario(step time.Duration, seed uint64) Scenario {
	s := baseSpec("spike", seed, scenarioDay(), step)
	s.Spikes = []Spike{{At: scenarioDay().Add(15 * time.Hour), Duration: 20 * time.Minute, Factor: 2.5}}
	return replayedDay(s, "a weekday with a 2.5x burst at 15:00 for 20 min that no history announces")
}

// scenarioDay is the Wednesday the weekday scenarios replay.
func scenarioDay() time.Time { return time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC) }

// baseSpec is the scenarios' shape: four weeks of history before day, then day; a peak of
// 40000, weekends at half, 2% growth a week, 6% noise and a past holiday.
func baseSpec(name string, seed uint64, day time.Time, step time.Duration) Spec {
	return Spec{Name: name, Start: day.Add(-History), Span: History + 24*time.Hour, Step: step, Seed: seed,
		Peak: 40000, Weekend: 0.5, GrowthPerWeek: 0.02, Noise: 0.06,
		Holidays: []time.Time{time.Date(2026, 10, 12, 0, 0, 0, 0, time.UTC)}}
}

// replayedDay is the scenario replaying the last day of s.
func replayedDay(s Spec, about string) Scenario {
	from := s.Start.Add(History)
	return Scenario{Name: s.Name, About: about, Make: func() (Trace, error) { return Generate(s), nil }, From: from, To: from.Add(24*time.Hour - s.Step)}
}
