package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"
)

// errServerStopped is returned when the API server stops on its own, without an error.
var errServerStopped = errors.New("API server stopped")

// sharedCache is the cluster cache as the lifecycle sees it.
type sharedCache interface {
	StartWithContext(ctx context.Context)
	Shutdown()
}

// lifecycle is what Run runs: the parts (the metrics provider, the autoscaler) on the shared
// cache, behind the API server.
type lifecycle struct {
	server func(ctx context.Context) error
	cache  sharedCache
	parts  []func(ctx context.Context) error
}

// run starts the server, the cache and the parts, and returns once all of them have stopped.
// They stop when ctx is done, when a part fails or when the server fails (or stops on its
// own): the parts first, then the cache, then the server, which serves until the end. The
// first failure is returned.
func (l lifecycle) run(ctx context.Context) error {
	serverCtx, stopServer := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServer()
	serverDone := make(chan error, 1)
	go func() { serverDone <- l.server(serverCtx) }()

	g, gctx := errgroup.WithContext(ctx)
	serverExited := false
	g.Go(func() error {
		select {
		case err := <-serverDone:
			serverExited = true
			if err == nil {
				err = errServerStopped
			}
			return fmt.Errorf("run API server: %w", err)
		case <-gctx.Done():
			return nil
		}
	})
	l.cache.StartWithContext(gctx)
	for _, part := range l.parts {
		g.Go(func() error { return part(gctx) })
	}
	err := g.Wait()
	l.cache.Shutdown()
	if !serverExited {
		stopServer()
		if serr := <-serverDone; serr != nil && err == nil {
			err = fmt.Errorf("run API server: %w", serr)
		}
	}
	return err
}

// reloadOnSIGHUP returns a channel that receives on every SIGHUP until ctx is done: the
// command's signal, turned into the provider's reload trigger.
func reloadOnSIGHUP(ctx context.Context) <-chan struct{} {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reload := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case reload <- struct{}{}:
				default: // a reload is already pending
				}
			}
		}
	}()
	return reload
}
