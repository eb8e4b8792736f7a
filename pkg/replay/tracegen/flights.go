package tracegen

import (
	"bufio"
	_ "embed" // the flights series ships inside the package
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// flights holds U.S. domestic departures per 5 minutes, 2001-01-01 to 2001-02-11 (see its header).
//
//go:embed flights-2001.txt
var flights string

// FlightsPerDeparture is the load one departure per 5 minutes stands for in Flights: at 200, the
// busiest 5 minutes (about 110 departures) are 22000, 11 pods at 2000 each.
const FlightsPerDeparture = 200

// Flights is a real traffic series: the departures of U.S. domestic flights per 5 minutes over
// six weeks of 2001 (a public series shipped in the npm package vega-datasets), times
// FlightsPerDeparture, interpolated to step. Each count stands at the middle of its 5 minutes.
func Flights(step time.Duration) (Trace, error) {
	const bucket = 5 * time.Minute
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	var counts []float64
	sc := bufio.NewScanner(strings.NewReader(flights))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return Trace{}, fmt.Errorf("flights series line %q: %w", line, err)
		}
		counts = append(counts, v*FlightsPerDeparture)
	}
	coarse := Trace{Name: "flights", Start: start.Add(bucket / 2), Step: bucket, Load: counts}
	tr := Trace{Name: "flights", Start: start, Step: step}
	end := start.Add(time.Duration(len(counts)) * bucket)
	for t := start; t.Before(end); t = t.Add(step) {
		v := coarse.At(t)
		if math.IsNaN(v) { // the first and last half bucket
			v = counts[min(len(counts)-1, int(t.Sub(start)/bucket))]
		}
		tr.Load = append(tr.Load, v)
	}
	return tr, nil
}

// FlightsScenario replays Wednesday 2001-02-07 of Flights after four weeks of its history.
func FlightsScenario(step time.Duration) Scenario {
	from := time.Date(2001, 2, 7, 0, 0, 0, 0, time.UTC)
	return Scenario{Name: "flights", About: "real traffic: U.S. flight departures per 5 minutes, a Wednesday of 2001",
		From: from, To: from.Add(24*time.Hour - step),
		Make: func() (Trace, error) { return Flights(step) }}
}
