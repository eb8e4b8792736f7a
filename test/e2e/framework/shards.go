package framework

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// AutoscalerShardsEnv names the environment variable that runs every podpilot the framework
// starts with --autoscaler-shards=N (N > 1), e.g. `make test-faults-sharded` (N = 3). Unset or
// 1 is one Lease, podpilot's default.
const AutoscalerShardsEnv = "PODPILOT_E2E_AUTOSCALER_SHARDS"

// autoscalerShards reads AutoscalerShardsEnv once.
var autoscalerShards = sync.OnceValues(func() (int, error) {
	v := os.Getenv(AutoscalerShardsEnv)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a count of buckets, at least 1", AutoscalerShardsEnv, v)
	}
	return n, nil
})

// AutoscalerShards returns the number of buckets the podpilots of this run are started with
// (AutoscalerShardsEnv; 1 if unset). It panics on a malformed value: every test would be
// run with a setting nobody asked for.
func AutoscalerShards() int {
	n, err := autoscalerShards()
	if err != nil {
		panic(err)
	}
	return n
}

// shardArgs returns the flag that runs a podpilot started with args on AutoscalerShards()
// buckets (see shardFlag).
func shardArgs(args []string) ([]string, error) {
	n, err := autoscalerShards()
	if err != nil {
		return nil, err
	}
	return shardFlag(n, args), nil
}

// shardFlag returns the flag that runs a podpilot started with args on n buckets: none with one
// bucket, when args choose their own count, or when they turn leader election off (shards are
// Leases; such a podpilot runs no autoscaler to shard).
func shardFlag(n int, args []string) []string {
	if n == 1 || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--autoscaler-shards") || a == "--leader-elect=false"
	}) {
		return nil
	}
	return []string{"--autoscaler-shards=" + strconv.Itoa(n)}
}
