package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// benchSeries is four weeks at one-minute resolution with a daily and weekly wave and noise.
func benchSeries() Series {
	r := rand.New(rand.NewPCG(5, 6))
	s := Series{Start: t0, Step: time.Minute}
	sh := shape{level: 1000, daily: 400, weekly: 100}
	for t := t0; t.Before(t0.Add(28 * day)); t = t.Add(time.Minute) {
		s.Values = append(s.Values, math.Max(0, sh.at(t)*(1+0.05*r.NormFloat64())))
	}
	return s
}

// BenchmarkFit is the cost of one refit of four weeks at one-minute resolution (40320 values),
// paid once per distinct (namespace, metric, selector) per refresh, never per round.
func BenchmarkFit(b *testing.B) {
	s := benchSeries()
	for _, method := range Methods() {
		b.Run(string(method), func(b *testing.B) {
			for b.Loop() {
				if _, err := Fit(s, method); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
