package framework

import (
	"slices"
	"testing"
)

func TestShardFlag(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		args []string
		want []string
	}{
		{"one bucket adds nothing: podpilot's default", 1, nil, nil},
		{"more buckets run every podpilot on them", 3, []string{"--config=x"}, []string{"--autoscaler-shards=3"}},
		{"a test's own count wins", 3, []string{"--autoscaler-shards=6"}, nil},
		{"a podpilot without leader election is not sharded", 3, []string{"--leader-elect=false"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := shardFlag(tt.n, tt.args); !slices.Equal(got, tt.want) {
				t.Errorf("shardFlag(%d, %q) = %q, want %q", tt.n, tt.args, got, tt.want)
			}
		})
	}
}
