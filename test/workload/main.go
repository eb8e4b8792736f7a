// Command workload is the design seed's vg1-vanguard for real: an HTTP
// server whose cpu and memory follow the queries it answers, for the demo and
// tests on a real node. GET /query?n=N answers N queries; each hashes for
// about --cpu-per-query of cpu time (calibrated on this machine at start-up)
// and holds --memory-per-query of memory for --memory-window. /metrics
// exports zdns_vanguard_queries_total (podpilot's default rules serve it as
// zdns_vanguard_qps), /readyz fails until --startup-delay has passed and
// again once SIGTERM arrives, /livez answers as long as the process serves.
//
// It is a static binary for an image FROM scratch: it needs no file, no
// shell and no root. Linux only (it reads the thread's cpu time and maps
// anonymous memory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// options are the command line.
type options struct {
	listen          string
	cpuPerQuery     time.Duration
	memoryPerQuery  resource.Quantity
	memoryWindow    time.Duration
	maxHeldMemory   resource.Quantity
	startupDelay    time.Duration
	shutdownDelay   time.Duration
	shutdownTimeout time.Duration
}

// The defaults are calibrated for the seed's targets (docs/demo-workload.md):
// 2000 queries/s in batches of 50 cost about 50m of cpu, half of the
// Deployment's 100m request, and keep about 145Mi resident, under the 256Mi
// target.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{memoryPerQuery: resource.MustParse("4Ki"), maxHeldMemory: resource.MustParse("256Mi")}
	fs.StringVar(&o.listen, "listen", ":8080", "address to serve /query, /metrics, /readyz and /livez on")
	fs.DurationVar(&o.cpuPerQuery, "cpu-per-query", 10*time.Microsecond, "cpu time each query spends hashing (calibrated at start-up; 0 for none)")
	fs.Var(quantityValue{&o.memoryPerQuery}, "memory-per-query", "memory each query holds for --memory-window, rounded up to whole 4Ki pages (0 for none)")
	fs.DurationVar(&o.memoryWindow, "memory-window", 15*time.Second, "how long a query's memory is held")
	fs.Var(quantityValue{&o.maxHeldMemory}, "max-held-memory", "at most this much memory is held; past it the oldest is given back early")
	fs.DurationVar(&o.startupDelay, "startup-delay", 5*time.Second, "time from start until /readyz and /query answer (calibration included)")
	fs.DurationVar(&o.shutdownDelay, "shutdown-delay", 3*time.Second, "after SIGTERM, keep serving (with /readyz failing) this long before closing")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "after --shutdown-delay, wait at most this long for requests in flight")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, errors.Join(o.validate()...)
}

func (o options) validate() []error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"--cpu-per-query", o.cpuPerQuery}, {"--startup-delay", o.startupDelay},
		{"--shutdown-delay", o.shutdownDelay}, {"--shutdown-timeout", o.shutdownTimeout},
	} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %s", f.name, f.d))
		}
	}
	if o.cpuPerQuery > time.Second {
		errs = append(errs, fmt.Errorf("--cpu-per-query must be at most 1s, got %s", o.cpuPerQuery))
	}
	if o.memoryWindow <= 0 {
		errs = append(errs, fmt.Errorf("--memory-window must be positive, got %s", o.memoryWindow))
	}
	if v := o.memoryPerQuery.Value(); v < 0 || v > 16<<20 {
		errs = append(errs, fmt.Errorf("--memory-per-query must be from 0 to 16Mi, got %s", o.memoryPerQuery.String()))
	}
	if v := o.maxHeldMemory.Value(); v < 0 || v > 16<<30 {
		errs = append(errs, fmt.Errorf("--max-held-memory must be from 0 to 16Gi, got %s", o.maxHeldMemory.String()))
	}
	return errs
}

// quantityValue is a flag.Value for a resource.Quantity such as 8Ki.
type quantityValue struct{ q *resource.Quantity }

func (v quantityValue) String() string {
	if v.q == nil {
		return ""
	}
	return v.q.String()
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("parse quantity %q: %w", s, err)
	}
	*v.q = q
	return nil
}

func main() {
	started := time.Now()
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	if err := run(ctx, opts, started); err != nil {
		klog.FromContext(ctx).Error(err, "Workload failed")
		stop()
		os.Exit(1)
	}
}

// run serves until ctx is cancelled (SIGTERM), then fails readiness, keeps
// serving for the shutdown delay and closes.
func run(ctx context.Context, o options, started time.Time) error {
	logger := klog.FromContext(ctx)
	// Listen first: until Serve runs, the kernel queues connections (the
	// kubelet's liveness probe waits instead of being refused).
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	defer ln.Close()
	hashBytes, err := calibrate(o.cpuPerQuery)
	if err != nil {
		return fmt.Errorf("calibrate --cpu-per-query=%s: %w", o.cpuPerQuery, err)
	}
	slot := int((o.memoryPerQuery.Value() + pageSize - 1) / pageSize * pageSize)
	held, err := mapHeldMemory(int(o.maxHeldMemory.Value()), slot, o.memoryWindow)
	if err != nil {
		return err
	}
	s := newServer(clock.RealClock{}, logger, newHashWork(hashBytes), held)
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("Serving", "addr", ln.Addr().String(), "cpuPerQuery", o.cpuPerQuery, "hashBytesPerQuery", hashBytes,
		"memoryPerQuery", slot, "memoryWindow", o.memoryWindow, "maxHeldMemory", len(held.mem))
	go expireHeld(ctx, held, o.memoryWindow/10)
	select {
	case <-time.After(time.Until(started.Add(o.startupDelay))):
		s.ready.Store(true)
		logger.Info("Ready", "startup", time.Since(started).Round(time.Millisecond))
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	s.stopping.Store(true)
	logger.Info("Stopping: not ready, still serving", "for", o.shutdownDelay)
	time.Sleep(o.shutdownDelay)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down the server on %s: %w", ln.Addr(), err)
	}
	logger.Info("Stopped")
	return nil
}

// expireHeld gives back expired held memory every period until ctx ends.
func expireHeld(ctx context.Context, held *heldMemory, period time.Duration) {
	logger := klog.FromContext(ctx)
	t := time.NewTicker(max(period, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := held.expire(now); err != nil {
				logger.Error(err, "Could not give back held memory")
			}
		}
	}
}
