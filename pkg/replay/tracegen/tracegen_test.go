package tracegen

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

func TestGenerate(t *testing.T) {
	mon := time.Date(2026, 10, 19, 0, 0, 0, 0, time.UTC)
	s := Spec{Name: "t", Start: mon, Span: 7 * 24 * time.Hour, Step: 15 * time.Second, Peak: 1000, Weekend: 0.5,
		Holidays: []time.Time{mon.AddDate(0, 0, 1)}, Spikes: []Spike{{At: mon.Add(3 * time.Hour), Duration: 10 * time.Minute, Factor: 3}}}
	tr := Generate(s)
	at := func(d time.Duration) float64 { return tr.At(mon.Add(d)) }
	tests := []struct {
		name      string
		got, want float64
	}{
		{name: "the weekday ramp at 08:00 reaches 90% of the peak in three minutes", got: at(8*time.Hour + 3*time.Minute), want: 900},
		{name: "before it the load is 35%", got: at(7*time.Hour + 59*time.Minute), want: 350},
		{name: "a holiday runs the weekend pattern: at 08:03 still the weekend's night", got: at(24*time.Hour + 8*time.Hour + 3*time.Minute), want: 0.3 * 500},
		{name: "Saturday peaks at the weekend's share", got: at(5*24*time.Hour + 15*time.Hour), want: 500},
		{name: "a spike multiplies the load once ramped up (a minute)", got: at(3*time.Hour + 5*time.Minute), want: 3 * 150},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-6*tc.want+1e-9 {
			t.Errorf("%s: %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	again := Generate(s)
	s.Noise = 0.05
	noisy, noisy2 := Generate(s), Generate(s)
	if !slicesEqual(tr.Load, again.Load) || !slicesEqual(noisy.Load, noisy2.Load) {
		t.Error("the same spec generates the same trace")
	}
	if slicesEqual(tr.Load, noisy.Load) {
		t.Error("noise changes the trace")
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFlightsSeriesShipsSixWeeks(t *testing.T) {
	tr, err := Flights(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(tr.Load), 42*24*60; got != want {
		t.Fatalf("%d values at 1m, want %d (42 days)", got, want)
	}
	noon, night := tr.At(time.Date(2001, 2, 7, 12, 0, 0, 0, time.UTC)), tr.At(time.Date(2001, 2, 7, 3, 0, 0, 0, time.UTC))
	if !(noon > 10*night) {
		t.Errorf("departures at noon %g, at 03:00 %g: the day's pattern is missing", noon, night)
	}
}

func TestWriteOpenMetricsCountsTheLoadPerPod(t *testing.T) {
	start := time.Date(2026, 10, 19, 0, 0, 0, 0, time.UTC)
	tr := Trace{Name: "flat", Start: start, Step: 15 * time.Second, Load: []float64{100, 100, 100, 100, 100}}
	var b bytes.Buffer
	if err := WriteOpenMetrics(&b, tr, "x_queries", "ns", Pods("web", 2), start, start.Add(time.Minute), 15*time.Second); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# TYPE x_queries counter\n",
		`x_queries_total{namespace="ns",pod="web-7d9f8b6c5d-00000"} 3750.000 1792368060` + "\n", // 100/s ÷ 2 pods × 15 s × 5 scrapes
		"# EOF\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTheOutliersScenarioHasItsOutliersInTheHistoryOnly(t *testing.T) {
	sc := OutliersScenario(15 * time.Second)
	tr, err := sc.Make()
	if err != nil {
		t.Fatal(err)
	}
	var outliers []time.Time
	for i, v := range tr.Load {
		if v >= 100*40000 {
			outliers = append(outliers, tr.Start.Add(time.Duration(i)*tr.Step))
		}
	}
	if len(outliers) != 3*4 { // three minutes of four 15 s values
		t.Fatalf("%d values at 100x the peak, want 12: %v", len(outliers), outliers)
	}
	for _, at := range outliers {
		if !at.Before(sc.From) {
			t.Errorf("an outlier at %s, in the replayed day from %s: want them in the history only", at, sc.From)
		}
	}
	names := []string{}
	for _, s := range Scenarios(15 * time.Second) {
		names = append(names, s.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "outliers") {
		t.Errorf("scenarios %v, want the outliers one among them", names)
	}
}

func TestTheOutliersScenariosForecastFollowsTheLoadNotItsOutliers(t *testing.T) {
	sc := OutliersScenario(time.Minute)
	tr, err := sc.Make()
	if err != nil {
		t.Fatal(err)
	}
	// The morning ramp at 08:02, whose time of day had a minute at 100x the peak five days
	// before: the forecast of a model fitted at 06:00 stays within 1.2x of the load.
	s := forecast.Series{Start: tr.Start, Step: time.Minute, Values: tr.Load[:int(History/time.Minute)+6*60]}
	m, err := forecast.Fit(s, forecast.HoltWinters)
	if err != nil {
		t.Fatal(err)
	}
	at := sc.From.Add(8*time.Hour + 2*time.Minute)
	got, err := m.At(at)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("forecast at %s = %.0f, load %.0f", at.Format("15:04"), got, tr.At(at))
	if load := tr.At(at); got > 1.2*load {
		t.Errorf("forecast at %s = %.0f, load %.0f: %.2fx, want within 1.2x", at.Format("15:04"), got, load, got/load)
	}
}

func TestTheWeakScenarioIsWeaklySeasonalYetSeasonal(t *testing.T) {
	// At bench p's 15 s, averaged to the one-minute history the forecast fits.
	sc := WeakScenario(15 * time.Second)
	tr, err := sc.Make()
	if err != nil {
		t.Fatal(err)
	}
	s := forecast.Series{Start: tr.Start, Step: time.Minute}
	for i := 0; i+4 <= int(History/(15*time.Second)); i += 4 {
		s.Values = append(s.Values, (tr.Load[i]+tr.Load[i+1]+tr.Load[i+2]+tr.Load[i+3])/4)
	}
	m, err := forecast.Fit(s, forecast.HoltWinters)
	if err != nil {
		t.Fatalf("fit the weak scenario's history: %v (want it above the seasonal strength threshold)", err)
	}
	if m.Strength < forecast.MinSeasonalStrength || m.Strength > 0.5 {
		t.Errorf("seasonal strength %.2f, want between %.2f and 0.50", m.Strength, forecast.MinSeasonalStrength)
	}
	t.Logf("seasonal strength %.2f, headroom %.2f", m.Strength, m.Headroom)
}
