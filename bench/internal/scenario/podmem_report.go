package scenario

import (
	"fmt"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
)

// rssSample is one process's RSS over a level's window, in MiB.
type rssSample struct{ median, max float64 }

func summarizeRSS(mib []float64) rssSample {
	s := stats.Summarize(mib)
	return rssSample{median: s.P50, max: s.Max}
}

func (s rssSample) String() string { return stats.Num(s.median, 1) + " / " + stats.Num(s.max, 1) }

// podLevel is scenario g at one number of pods.
type podLevel struct {
	pods                        int
	podpilot, baseline, adapter rssSample
	// protoPerPod and jsonPerPod are a pod's bytes in a LIST, 0 without pods.
	protoPerPod, jsonPerPod float64
}

// growth is the median RSS growth from base to l in MiB.
func growth(l, base rssSample) float64 { return l.median - base.median }

// growthCell formats a growth in MiB with its bytes per pod.
func growthCell(mib float64, pods int) string {
	if pods == 0 {
		return stats.Num(mib, 1)
	}
	return fmt.Sprintf("%s (%s B/pod)", stats.Num(mib, 1), stats.Num(mib*(1<<20)/float64(pods), 0))
}

func podTable(levels []podLevel, withAdapter bool) report.Table {
	t := report.Table{Header: []string{"pods", "podpilot RSS MiB median / max", "podpilot growth MiB",
		"typed informer RSS MiB median / max", "typed informer growth MiB", "podpilot growth × typed informer growth"}}
	if withAdapter {
		t.Header = append(t.Header, "prometheus-adapter RSS MiB median / max", "adapter growth MiB")
	}
	t.Header = append(t.Header, "protobuf B/pod", "JSON B/pod")
	if len(levels) == 0 {
		return t
	}
	base := levels[0]
	for _, l := range levels {
		pg, bg := growth(l.podpilot, base.podpilot), growth(l.baseline, base.baseline)
		ratio := "–"
		if l.pods > base.pods {
			ratio = stats.Ratio(pg, bg)
		}
		row := []string{fmt.Sprint(l.pods), l.podpilot.String(), growthCell(pg, l.pods-base.pods),
			l.baseline.String(), growthCell(bg, l.pods-base.pods), ratio}
		if withAdapter {
			row = append(row, l.adapter.String(), growthCell(growth(l.adapter, base.adapter), l.pods-base.pods))
		}
		row = append(row, sizeCell(l.protoPerPod), sizeCell(l.jsonPerPod))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func sizeCell(b float64) string {
	if b == 0 {
		return "–"
	}
	return stats.Num(b, 0)
}

// per10k scales the growth from base to top to 10,000 pods.
func per10k(mib float64, pods int) float64 { return mib / float64(pods) * 10000 }

// podHeadline compares the growth per 10k pods at the largest level.
func podHeadline(levels []podLevel, withAdapter bool) []string {
	if len(levels) < 2 {
		return nil
	}
	base, top := levels[0], levels[len(levels)-1]
	n := top.pods - base.pods
	pg, bg := growth(top.podpilot, base.podpilot), growth(top.baseline, base.baseline)
	line := fmt.Sprintf("g. podpilot RSS grew %s MiB per 10k pods (%s → %s MiB at %d pods) = %s the unstripped typed informer's %s MiB per 10k "+
		"(target ≤ 0.25×)", stats.Num(per10k(pg, n), 1), stats.Num(base.podpilot.median, 0), stats.Num(top.podpilot.median, 0), top.pods,
		stats.Ratio(pg, bg), stats.Num(per10k(bg, n), 1))
	if withAdapter {
		line += fmt.Sprintf("; prometheus-adapter %s MiB per 10k", stats.Num(per10k(growth(top.adapter, base.adapter), n), 1))
	}
	line += fmt.Sprintf("; a pod is %s B in protobuf, %s B in JSON", sizeCell(top.protoPerPod), sizeCell(top.jsonPerPod))
	return []string{line}
}

// podNotes states the target's verdict in words.
func podNotes(levels []podLevel, withAdapter bool) []string {
	if len(levels) < 2 {
		return nil
	}
	base, top := levels[0], levels[len(levels)-1]
	pg, bg := growth(top.podpilot, base.podpilot), growth(top.baseline, base.baseline)
	verdict := "meets"
	if bg <= 0 || pg > 0.25*bg {
		verdict = "misses"
	}
	notes := []string{fmt.Sprintf("Issue #10's target, podpilot's RSS growth per 10k pods ≤ 0.25× the unstripped typed informer's: %s at %d pods "+
		"(%s).", verdict, top.pods, stats.Ratio(pg, bg))}
	if withAdapter {
		notes = append(notes, "prometheus-adapter runs the same default rules without `resourceRules`; whether it caches pods "+
			"at all shows in its growth column.")
	}
	return notes
}
