package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// Pods names the pods an OpenMetrics export spreads the load over: a Deployment's pod names.
func Pods(deployment string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-7d9f8b6c5d-%05d", deployment, i)
	}
	return out
}

// WriteOpenMetrics writes tr from from to to as the per-pod counters a scrape every scrape would
// have seen, for `promtool tsdb create-blocks-from openmetrics`: counter{namespace, pod} counts
// the load (per second) integrated over time, spread evenly over pods. Each series' samples are
// written together, oldest first, and the file ends with # EOF.
func WriteOpenMetrics(w io.Writer, tr Trace, counter, namespace string, pods []string, from, to time.Time, scrape time.Duration) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# HELP %s Generated load (tracegen %s).\n# TYPE %s counter\n", counter, tr.Name, counter)
	share := 1 / float64(len(pods))
	for _, pod := range pods {
		total := 0.0
		for t := from; !t.After(to); t = t.Add(scrape) {
			if v := tr.At(t); v == v { // not NaN
				total += v * share * scrape.Seconds()
			}
			fmt.Fprintf(bw, "%s_total{namespace=%q,pod=%q} %.3f %d\n", counter, namespace, pod, total, t.Unix())
		}
	}
	fmt.Fprint(bw, "# EOF\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write openmetrics of %s: %w", tr.Name, err)
	}
	return nil
}
