package app

import (
	"strings"
	"testing"
)

func TestAutoscalerShardsValidation(t *testing.T) {
	cases := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{"the default is one shard: the single Lease, as before", func(*Options) {}, ""},
		{"six shards over Leases", func(o *Options) { o.Shards = 6 }, ""},
		{"zero shards is refused", func(o *Options) { o.Shards = 0 }, "must be in [1, 64]"},
		{"more shards than the bound is refused", func(o *Options) { o.Shards = 65 }, "must be in [1, 64]"},
		{"shards need leader election", func(o *Options) { o.Shards, o.LeaderElection.LeaderElect = 2, false }, "needs --leader-elect"},
		{"shards need the Lease lock", func(o *Options) { o.Shards, o.LeaderElection.ResourceLock = 2, "configmapsleases" },
			"needs --leader-elect-resource-lock=leases"},
	}
	for _, c := range cases {
		o := NewOptions()
		c.change(o)
		errs := o.validateShards()
		switch {
		case c.wantErr == "" && len(errs) != 0:
			t.Errorf("%s: %v, want no error", c.name, errs)
		case c.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.wantErr)):
			t.Errorf("%s: %v, want one error with %q", c.name, errs, c.wantErr)
		}
	}
	if NewOptions().Shards != 1 {
		t.Error("--autoscaler-shards defaults to something other than 1")
	}
}
