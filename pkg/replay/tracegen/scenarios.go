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
}

// History is the history before each scenario's replayed day.
const History = 28 * 24 * time.Hour

// Scenarios are the synthetic traces predictive scaling is measured on: a weekday, a weekend
// day, a holiday and a weekday with an unforecastable spike, each after four weeks of history
// with noise, a 2%/week trend and a past holiday. Step is the trace's resolution (the sync period).
func Scenarios(step time.Duration) []Scenario {
	wed := time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC)
	base := func(name string, seed uint64, day time.Time) Spec {
		return Spec{Name: name, Start: day.Add(-History), Span: History + 24*time.Hour, Step: step, Seed: seed,
			Peak: 40000, Weekend: 0.5, GrowthPerWeek: 0.02, Noise: 0.06,
			Holidays: []time.Time{time.Date(2026, 10, 12, 0, 0, 0, 0, time.UTC)}}
	}
	diurnal := base("diurnal", 1, wed)
	weekend := base("weekend", 2, wed.AddDate(0, 0, 3))
	holiday := base("holiday", 3, wed.AddDate(0, 0, 1))
	holiday.Holidays = append(holiday.Holidays, wed.AddDate(0, 0, 1))
	spike := base("spike", 4, wed)
	spike.Spikes = []Spike{{At: wed.Add(15 * time.Hour), Duration: 20 * time.Minute, Factor: 2.5}}
	day := func(s Spec, about string) Scenario {
		from := s.Start.Add(History)
		return Scenario{Name: s.Name, About: about, Make: func() (Trace, error) { return Generate(s), nil }, From: from, To: from.Add(24*time.Hour - step)}
	}
	return []Scenario{
		day(diurnal, "a weekday: ramps at 08:00 (3 min) and 13:00 (5 min)"),
		day(weekend, "a Saturday: the weekly pattern (a later, smaller ramp at 10:00)"),
		day(holiday, "a weekday that runs a Sunday's pattern: the forecast expects a workday"),
		day(spike, "a weekday with a 2.5x burst at 15:00 for 20 min that no history announces"),
		FlightsScenario(step),
	}
}
