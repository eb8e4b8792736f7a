package app

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder records the order in which the lifecycle's pieces stop.
type recorder struct {
	mu      sync.Mutex
	stopped []string
}

func (r *recorder) add(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = append(r.stopped, what)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stopped)
}

// fakeCache records its start and waits for its context at shutdown, like informer factories.
type fakeCache struct {
	rec     *recorder
	started chan struct{}
	ctx     context.Context
}

func (c *fakeCache) StartWithContext(ctx context.Context) { c.ctx = ctx; close(c.started) }

func (c *fakeCache) Shutdown() {
	<-c.ctx.Done()
	c.rec.add("cache")
}

// part runs until its context is done, then records that it stopped.
func part(rec *recorder, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		rec.add(name)
		return nil
	}
}

func TestLifecycle(t *testing.T) {
	failed := errors.New("listen tcp 127.0.0.1:6443: bind: address already in use")
	crashed := errors.New("autoscaler crashed")
	tests := []struct {
		name string
		// server and parts get the recorder; cancel is called once everything has started.
		server  func(rec *recorder) func(context.Context) error
		failing func(context.Context) error
		cancel  bool
		wantErr error
		want    []string
	}{
		{
			name: "a server that fails to start stops the provider and the autoscaler, and its cause is returned",
			server: func(*recorder) func(context.Context) error {
				return func(context.Context) error { return failed }
			},
			wantErr: failed,
			want:    []string{"autoscaler", "provider", "cache"},
		},
		{
			name: "a server that stops on its own stops everything and is an error",
			server: func(*recorder) func(context.Context) error {
				return func(context.Context) error { return nil }
			},
			wantErr: errServerStopped,
			want:    []string{"autoscaler", "provider", "cache"},
		},
		{
			name: "cancelling stops the parts, then the cache, then the server last",
			server: func(rec *recorder) func(context.Context) error {
				return part(rec, "server")
			},
			cancel: true,
			want:   []string{"autoscaler", "provider", "cache", "server"},
		},
		{
			name: "a failing part stops the others, then the cache, then the server, and its error is returned",
			server: func(rec *recorder) func(context.Context) error {
				return part(rec, "server")
			},
			failing: func(context.Context) error { return crashed },
			wantErr: crashed,
			want:    []string{"autoscaler", "provider", "cache", "server"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			cache := &fakeCache{rec: rec, started: make(chan struct{})}
			l := lifecycle{
				server: tt.server(rec),
				cache:  cache,
				parts:  []func(context.Context) error{part(rec, "provider"), part(rec, "autoscaler")},
			}
			if tt.failing != nil {
				l.parts = append(l.parts, tt.failing)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- l.run(ctx) }()
			if tt.cancel {
				<-cache.started
				cancel()
			}
			err := <-done
			if tt.wantErr == nil && err != nil {
				t.Fatalf("run returned %v, want nil", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("run returned %v, want %v", err, tt.wantErr)
			}
			got := rec.list()
			// The parts stop concurrently: compare them as a set, the rest in order.
			if len(got) >= 2 {
				slices.Sort(got[:2])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stop order (-want +got):\n%s", diff)
			}
		})
	}
}
