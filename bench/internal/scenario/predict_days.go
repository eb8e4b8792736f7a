package scenario

import (
	"fmt"
	"math"
	"time"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/replay"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

// dayFigures are one replayed day's figures of a comparison.
type dayFigures struct {
	day         time.Time
	holiday     bool
	r, p, o     replay.Summary
	model, pers forecast.Accuracy
	answered    float64
}

// perDay splits c's steps into UTC days and summarizes each: the three runs, and the model's and
// persistence's accuracy at the lead time at the steps the model answered.
func perDay(sc tracegen.Scenario, c replay.Comparison) []dayFigures {
	var out []dayFigures
	steps := c.Steps[replay.Reactive]
	ahead := int(c.LeadTime / predictStep)
	for a := 0; a < len(steps); {
		day := steps[a].Time.UTC().Truncate(24 * time.Hour)
		b := a
		for b < len(steps) && steps[b].Time.UTC().Truncate(24*time.Hour).Equal(day) {
			b++
		}
		f := dayFigures{day: day, holiday: isHoliday(sc.Holidays, day),
			r: replay.Summarize(c.Spec, c.Steps[replay.Reactive][a:b], predictStep, nil),
			p: replay.Summarize(c.Spec, c.Steps[replay.Predictive][a:b], predictStep, nil),
			o: replay.Summarize(c.Spec, c.Steps[replay.Oracle][a:b], predictStep, nil)}
		answered := 0
		for i := a; i < b; i++ {
			if math.IsNaN(c.Forecasts[i]) {
				continue
			}
			answered++
			if i+ahead < len(steps) {
				actual := steps[i+ahead].Load[0]
				f.model.Add(c.Forecasts[i], actual)
				f.pers.Add(steps[i].Load[0], actual)
			}
		}
		f.answered = float64(answered) / float64(b-a)
		out = append(out, f)
		a = b
	}
	return out
}

func isHoliday(holidays []time.Time, day time.Time) bool {
	for _, h := range holidays {
		if h.UTC().Truncate(24 * time.Hour).Equal(day) {
			return true
		}
	}
	return false
}

// perDayTable is the cost per day of a comparison over several days.
func perDayTable(sc tracegen.Scenario, c replay.Comparison) report.Table {
	t := report.Table{Header: []string{sc.Name + ", day", "replica-h r / p / o", "p÷r", "p÷o", "pod-s short r / p / o", "short p÷r",
		"WAPE ÷ persistence (answered)", "rescales/h r / p (p÷r)"}}
	for _, f := range perDay(sc, c) {
		label := f.day.Format("Mon 2006-01-02")
		if f.holiday {
			label += " (holiday)"
		}
		t.Rows = append(t.Rows, []string{label,
			fmt.Sprintf("%.1f / %.1f / %.1f", f.r.ReplicaHours, f.p.ReplicaHours, f.o.ReplicaHours),
			ratio(f.p.ReplicaHours, f.r.ReplicaHours), ratio(f.p.ReplicaHours, f.o.ReplicaHours),
			fmt.Sprintf("%.0f / %.0f / %.0f", f.r.PodSecondsShort, f.p.PodSecondsShort, f.o.PodSecondsShort),
			ratio(f.p.PodSecondsShort, f.r.PodSecondsShort),
			fmt.Sprintf("%s× (%s%%)", stats.Num(f.model.WAPE()/f.pers.WAPE(), 2), stats.Num(100*f.answered, 0)),
			fmt.Sprintf("%s / %s (%s)", stats.Num(f.r.RescalesPerHour(), 1), stats.Num(f.p.RescalesPerHour(), 1),
				ratio(f.p.RescalesPerHour(), f.r.RescalesPerHour()))})
	}
	return t
}

// afterHolidayHeadline is the closing note's line on the holiday week: the holidays' cost, each
// week's, and the highest cost of an ordinary weekday after the last holiday.
func afterHolidayHeadline(sc tracegen.Scenario, c replay.Comparison) string {
	days := perDay(sc, c)
	var week [2][3]float64
	var holR, holP float64
	worst, last := math.Inf(-1), -1
	for i, f := range days {
		w := min(i/7, 1)
		week[w][0] += f.r.ReplicaHours
		week[w][1] += f.p.ReplicaHours
		week[w][2] += f.o.ReplicaHours
		if f.holiday {
			holR, holP, last = holR+f.r.ReplicaHours, holP+f.p.ReplicaHours, i
		}
	}
	worstDay := ""
	for _, f := range days[last+1:] {
		if wd := f.day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		if q := f.p.ReplicaHours / f.r.ReplicaHours; q > worst {
			worst, worstDay = q, f.day.Format("Mon 01-02")
		}
	}
	return fmt.Sprintf("p: holiday week then an ordinary one: replica-h p÷r %s over the holiday week (%s over its holidays), %s over the week after "+
		"(p÷o %s and %s); the costliest ordinary weekday after the holidays is %s at %s× reactive's (target ≤ 1.10×)",
		ratio(week[0][1], week[0][0]), ratio(holP, holR), ratio(week[1][1], week[1][0]),
		ratio(week[0][1], week[0][2]), ratio(week[1][1], week[1][2]), worstDay, stats.Num(worst, 2))
}
