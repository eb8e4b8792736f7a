package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScaleSectionsComparePodAutoscalersWithTheHPAsOfTheSameN(t *testing.T) {
	e := &Env{Cfg: Config{Namespaces: 10, Rounds: 2, SyncPeriod: 15 * time.Second, ScrapeInterval: 15 * time.Second},
		OutDir: t.TempDir(), Prefix: "run"}
	bySize := map[int][]Phase{100: {
		{kind: kindHPA, n: 100, rounds: 2, queries: 100, writes: map[string]float64{"horizontalpodautoscalers/status": 20},
			first: 20 * time.Second, last: 40 * time.Second, resized: 100},
		{kind: kindPA, n: 100, rounds: 2, queries: 10, writes: map[string]float64{"podautoscalers/status": 200},
			first: 60 * time.Second, last: 120 * time.Second, resized: 100, paRoundSpans: []float64{12, 14}, paRoundMax: 0.512},
	}}
	secs, err := e.ScaleSections(bySize)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 2 {
		t.Fatalf("%d sections, want b and c", len(secs))
	}
	b, c := secs[0].Tables[0], secs[1].Tables[0]
	// b: 100 queries per round = 1.00× the 100 HPAs, 10× the 10 distinct (namespace, metric).
	if got := b.Rows[0][3] + " " + b.Rows[0][4]; got != "1.00× 10.0×" {
		t.Errorf("b ratios = %q, want %q", got, "1.00× 10.0×")
	}
	pa := c.Rows[1]
	for col, want := range map[int]string{1: "PodAutoscaler", 3: "120.0", 4: "3.00×", 7: "0.10×", 9: "10.0×", 13: "≤ 0.512"} {
		if pa[col] != want {
			t.Errorf("PodAutoscaler row column %q = %q, want %q", c.Header[col], pa[col], want)
		}
	}
	if len(secs[1].Headline) != 1 || !strings.Contains(secs[1].Headline[0], "after 120 s = 3.00× the stock HPA's 40 s") {
		t.Errorf("headline = %q", secs[1].Headline)
	}
	for _, img := range append(secs[0].Images, secs[1].Images...) {
		if _, err := os.Stat(filepath.Join(e.OutDir, img.File)); err != nil {
			t.Errorf("plot %s not written: %v", img.File, err)
		}
	}
}

func TestAPITableRatesEveryTargetAgainstTheRawQuery(t *testing.T) {
	runs := []apiRun{
		{target: "raw", res: driveResult{LatenciesMS: []float64{1, 1, 1, 1}, Elapsed: time.Second}, pCPU: 4 * time.Millisecond},
		{target: "direct", res: driveResult{LatenciesMS: []float64{2, 2}, Elapsed: time.Second}, serverCPU: 6 * time.Millisecond, hasServer: true},
	}
	tab := apiTable("same request", runs)
	got := strings.Join(tab.Rows[1], " | ")
	want := "direct | 2 | 0.50× | 2.0 | 2.0 | 2.0 | 2.00× | 3.00 | 0.00 | 0"
	if got != want {
		t.Errorf("direct row = %q, want %q", got, want)
	}
	if tab.Rows[0][7] != "–" {
		t.Errorf("the raw query has no server CPU, got %q", tab.Rows[0][7])
	}
}
