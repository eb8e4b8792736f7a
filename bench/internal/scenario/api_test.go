package scenario

import (
	"context"
	"strings"
	"testing"
)

func TestTheDistinctMixAsksForEveryPodByNameWithItsOwnRawQuery(t *testing.T) {
	mixes := apiMixes("ns", []string{"a", "b"})
	if len(mixes) != 2 {
		t.Fatalf("mixes = %d, want same and distinct", len(mixes))
	}
	same, distinct := mixes[0], mixes[1]
	if len(same.paths) != 1 || same.paths[0] != customPath("ns") || same.queries[0] != rawQuery("ns") {
		t.Errorf("same mix = %+v, want pods/* and its raw query once", same)
	}
	if len(distinct.paths) != 2 || len(distinct.queries) != 2 {
		t.Fatalf("distinct mix = %+v, want one path and one query per pod", distinct)
	}
	for i, pod := range []string{"a", "b"} {
		if !strings.Contains(distinct.paths[i], "/pods/"+pod+"/") || !strings.Contains(distinct.queries[i], `pod="`+pod+`"`) {
			t.Errorf("distinct[%d] = %s / %s, want pod %s in both", i, distinct.paths[i], distinct.queries[i], pod)
		}
	}
}

func TestRequestsInTurnCycleThroughEveryPath(t *testing.T) {
	req := getRequests("https://x", []string{"/a", "/b", "/c"})
	var got []string
	for range 4 {
		r, err := req(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.URL.Path)
	}
	if strings.Join(got, " ") != "/a /b /c /a" {
		t.Errorf("paths in turn = %v, want /a /b /c /a", got)
	}
}

func TestTheHeadlineComparesOtherServersThroughTheAggregatorWithPodpilotsDefault(t *testing.T) {
	run := func(name string, n int) apiRun {
		return apiRun{target: name, res: driveResult{LatenciesMS: make([]float64, n), Elapsed: 1e9}}
	}
	lines := apiHeadline("same", []apiRun{run("raw", 100), run(podpilotViaAggregator, 50), run("prometheus-adapter, via aggregator", 10)})
	if len(lines) != 2 {
		t.Fatalf("headline = %v, want one line per target after the floor", lines)
	}
	if !strings.Contains(lines[1], "serves 5.00× its req/s") {
		t.Errorf("adapter line = %q, want podpilot's default at 5.00× its req/s", lines[1])
	}
	if strings.Contains(lines[0], "serves") {
		t.Errorf("podpilot's own line compares with itself: %q", lines[0])
	}
}

func TestReactionRowsAreComparedOnTheSameRuleAndAcrossRulesOnlyWhenLabelled(t *testing.T) {
	e := &Env{Cfg: Config{ScrapeInterval: 15e9}}
	groups := e.reactGroups()
	if len(groups) != ReactRows {
		t.Fatalf("groups = %d, want %d", len(groups), ReactRows)
	}
	r := map[string][]float64{}
	for i, g := range groups {
		if g.kind != []kind{kindHPA, kindPA}[i%2] || (i%2 == 1 && g.metric != groups[i-1].metric) {
			t.Errorf("row %d (%s) is not the PodAutoscaler beside the stock HPA on the same rule", i, g.label)
		}
		r[g.label] = []float64{float64(10 + i)}
	}
	lines := reactHeadline(groups, r, r)
	want := []string{"same rule `bench_load`: PodAutoscaler median 11.0 s = 1.10× the stock HPA's 10.0 s",
		"same rule `bench_step_per_second`: PodAutoscaler median 13.0 s = 1.08× the stock HPA's 12.0 s",
		"same rule `bench_step_fast`: PodAutoscaler median 15.0 s = 1.07× the stock HPA's 14.0 s",
		"across rules (autoscaler and rule both switched)"}
	all := strings.Join(lines, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("headline lacks %q:\n%s", w, all)
		}
	}
}
