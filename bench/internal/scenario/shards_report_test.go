package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestShardSectionComparesTheFirstStepWithScenarioCsSingleReplica(t *testing.T) {
	e := &Env{Cfg: Config{Namespaces: 10, Rounds: 2, SyncPeriod: 15 * time.Second}}
	run := ShardRun{n: 60, shards: 6, spread: "2/2/2", spreadAfter: 4 * time.Second,
		replicas: []replicaStat{
			{id: "host_0123456789ab", buckets: 2, rssMiB: 50, cpuPerRound: 0.1, reconcilesPerSec: 1.5, roundMax: 0.25},
			{id: "host_abcdef012345", buckets: 2, rssMiB: 60, cpuPerRound: 0.2, reconcilesPerSec: 1.0, roundMax: 0.5},
		},
		steps: []shardStep{
			{name: "load step", from: 100, to: 300, last: 30 * time.Second, resized: 60, n: 60, fixed: []float64{10, 30}},
			{name: "kill", from: 300, to: 500, movedBuckets: 2, moved: []float64{25, 35}, fixed: []float64{12},
				rescalers: rescalerCount{rescaled: 3, byTwoOrMore: []string{"bench-n00/w-00000"}}, changes: map[int]int{1: 59, 2: 1}},
			{name: "restart", from: 500, to: 625, movedBuckets: 6, moved: []float64{8, 20}},
		},
		takeover: 16 * time.Second}
	c := map[int][]Phase{60: {{kind: kindPA, n: 60, last: 20 * time.Second}}}
	sec := e.ShardSection(run, c)
	if len(sec.Headline) != 3 || !strings.Contains(sec.Headline[0], "after 30 s = 1.50× scenario c's single replica (20 s)") {
		t.Errorf("headline = %q", sec.Headline)
	}
	if want := "none resized before its bucket moved; with every replica up (first step) p50 20.0 s (max 30.0)"; !strings.Contains(sec.Headline[2], want) {
		t.Errorf("a rolling restart that moved every bucket first compares with the first step: %q", sec.Headline[2])
	}
	total := sec.Tables[0].Rows[2]
	if got := strings.Join(total[1:6], " "); got != "4 110 0.30 2.5 0.500" {
		t.Errorf("total row = %q, want the buckets, RSS, CPU and reconciliations summed and the longest round's max", got)
	}
	kill := sec.Tables[1].Rows[1]
	if kill[6] != "2, 30.0, 35.0" || kill[8] != "1 of 3" || kill[10] != "1: 59, 2: 1" {
		t.Errorf("kill row = %q", kill)
	}
	if !strings.Contains(strings.Join(sec.Notes, "\n"), "bench-n00/w-00000") {
		t.Errorf("notes do not name the double scale: %q", sec.Notes)
	}
	if sec.Tables[0].Rows[0][0] != "01234567" {
		t.Errorf("replica = %q, want the identity's UUID's first 8 characters", sec.Tables[0].Rows[0][0])
	}
	if h := e.ShardSection(run, nil).Headline[0]; strings.Contains(h, "scenario c") {
		t.Errorf("without scenario c the headline compares with it: %q", h)
	}
}
