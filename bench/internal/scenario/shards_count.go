package scenario

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// bucketCounts returns how many of holders (one per bucket, "" for none)
// each of ids holds, in the order of ids, and how many buckets none of ids
// holds.
func bucketCounts(holders, ids []string) (counts []int, others int) {
	counts = make([]int, len(ids))
	for _, h := range holders {
		i := slices.Index(ids, h)
		if i < 0 || h == "" {
			others++
			continue
		}
		counts[i]++
	}
	return counts, others
}

// evenOver reports whether every bucket is held by one of ids and their
// counts differ by at most one (6 buckets over 3 replicas: 2/2/2; over 4: 2/2/1/1).
func evenOver(holders, ids []string) bool {
	counts, others := bucketCounts(holders, ids)
	if others > 0 || len(ids) == 0 {
		return false
	}
	return slices.Max(counts)-slices.Min(counts) <= 1
}

// spreadString prints the buckets each of ids holds, e.g. "2/2/2", with
// "+k unheld" when k buckets had no live holder among ids.
func spreadString(holders, ids []string) string {
	counts, others := bucketCounts(holders, ids)
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprint(c)
	}
	s := strings.Join(parts, "/")
	if others > 0 {
		s += fmt.Sprintf(" +%d unheld", others)
	}
	return s
}

// rescaledLine matches the controller's V(2) log line of a scale write
// (pkg/autoscaler/controller/sync.go) in klog's text format.
var rescaledLine = regexp.MustCompile(`\] "Rescaled" .*podAutoscaler="([^"]+)"`)

// rescaledIn returns how many times each PodAutoscaler (namespace/name) is
// logged as rescaled in log.
func rescaledIn(log string) map[string]int {
	out := map[string]int{}
	for line := range strings.Lines(log) {
		if m := rescaledLine.FindStringSubmatch(line); m != nil {
			out[m[1]]++
		}
	}
	return out
}

// rescalerCount is what the rescale logs of several processes say about one step.
type rescalerCount struct {
	// rescaled is how many PodAutoscalers at least one process rescaled;
	// lines how many rescales were logged in all.
	rescaled, lines int
	// byTwoOrMore are the PodAutoscalers that two or more distinct processes
	// rescaled (double scales when no bucket of theirs moved), sorted.
	byTwoOrMore []string
}

// countRescalers folds the per-process rescales (one map per process, as
// rescaledIn returns) into the distinct processes per PodAutoscaler.
func countRescalers(perProcess []map[string]int) rescalerCount {
	var c rescalerCount
	by := map[string]int{}
	for _, m := range perProcess {
		for pa, n := range m {
			if n > 0 {
				by[pa]++
			}
			c.lines += n
		}
	}
	for pa, n := range by {
		c.rescaled++
		if n > 1 {
			c.byTwoOrMore = append(c.byTwoOrMore, pa)
		}
	}
	slices.Sort(c.byTwoOrMore)
	return c
}

// holderSample is the bucket holders read at one moment.
type holderSample struct {
	at      time.Time
	holders []string
}

// movedWithin reports whether bucket's holder changed within [from, to] in
// timeline (ascending): whether a sample in that window differs from the
// holder of the last sample at or before from (an unheld bucket, "", counts
// as a holder: a bucket released and retaken by the same replica moved too).
func movedWithin(timeline []holderSample, bucket int, from, to time.Time) bool {
	start := -1
	for i, s := range timeline {
		if s.at.After(from) {
			break
		}
		start = i
	}
	if start < 0 {
		if len(timeline) == 0 {
			return false
		}
		start = 0
	}
	first := timeline[start].holders[bucket]
	for _, s := range timeline[start+1:] {
		if s.at.After(to) {
			break
		}
		if s.holders[bucket] != first {
			return true
		}
	}
	return false
}

// changeHistogram counts, for each number of spec.replicas changes a
// Deployment had in a step, how many Deployments had that many.
func changeHistogram(changes []int) map[int]int {
	out := map[int]int{}
	for _, c := range changes {
		out[c]++
	}
	return out
}

// formatChangeHistogram prints a changeHistogram as "1: 58, 2: 2", by number of changes.
func formatChangeHistogram(h map[int]int) string {
	keys := slices.Sorted(maps.Keys(h))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d: %d", k, h[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
