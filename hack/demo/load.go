package main

import (
	"context"
	"fmt"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
	"github.com/podpilot/podpilot/test/loadgen"
)

// offeredLoad makes the load profile's queries happen, so that the
// workload's pods count them in zdns_vanguard_queries_total.
type offeredLoad interface {
	// offer is called every second of the profile with its total qps then.
	offer(ctx context.Context, total float64)
	// stop stops the load; the series keep their last values.
	stop()
	// describe says in one line what the load did so far ("" if nothing
	// worth saying).
	describe() string
}

var (
	_ offeredLoad = (*kwokLoad)(nil)
	_ offeredLoad = (*nodeLoad)(nil)
)

// kwokLoad is the load on kwok pods, which run nothing: an exporter on the
// host serves each running pod's share as that pod's counter and, with
// resources, cAdvisor-like cpu and memory series that follow it, for
// Prometheus to scrape.
type kwokLoad struct {
	cluster *framework.Cluster
	ns      string
	exp     *exporter.Server
	load    *framework.Load
	usage   *framework.Usage
}

// startKwokLoad serves vg1-vanguard's counter in ns at 0 qps (and its cpu
// and memory if resources).
func startKwokLoad(ctx context.Context, c *framework.Cluster, ns string, resources bool) (*kwokLoad, error) {
	exp, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		return nil, fmt.Errorf("start the exporter: %w", err)
	}
	if err := exp.RegisterTarget(c.TargetsDir, exporterName); err != nil {
		_ = exp.Close()
		return nil, fmt.Errorf("register the exporter with Prometheus: %w", err)
	}
	l := &kwokLoad{cluster: c, ns: ns, exp: exp, load: c.NewLoad(ctx, exp, ns, workload, seriesName, true)}
	l.load.Set(0)
	if resources {
		l.usage = c.NewUsage(ctx, exp, ns, workload, cpuCores(0), podMemoryBytes)
	}
	return l, nil
}

// offer spreads total over the running pods, and makes each pod's cpu
// follow the qps it gets.
func (l *kwokLoad) offer(ctx context.Context, total float64) {
	l.load.Set(total)
	if l.usage == nil {
		return
	}
	pods, err := l.cluster.RunningPods(ctx, l.ns, workload)
	if err != nil || len(pods) == 0 {
		return
	}
	l.usage.Set(cpuCores(framework.PerPod(total, len(pods))), podMemoryBytes)
}

func (l *kwokLoad) describe() string { return "" }

func (l *kwokLoad) stop() {
	if l.usage != nil {
		l.usage.Stop()
	}
	l.load.Stop()
	_ = l.exp.Close()
}

// nodeLoad is the load on real pods (test/workload): test/loadgen sends the
// profile's queries to the workload's Service, kube-proxy spreads them over
// the Ready pods, and each pod counts what it answered.
type nodeLoad struct {
	url    string
	gen    *loadgen.Generator
	cancel context.CancelFunc
	done   chan struct{}
}

// newNodeLoad returns the load for the Service at url (its ClusterIP, e.g.
// http://10.0.0.17/query); nothing is sent before the first offer.
func newNodeLoad(url string) (*nodeLoad, error) {
	gen, err := loadgen.New(loadgen.DefaultConfig(url), clock.RealClock{})
	if err != nil {
		return nil, fmt.Errorf("load generator for %s: %w", url, err)
	}
	return &nodeLoad{url: url, gen: gen}, nil
}

// offer starts the whole profile at the first call: the generator keeps its
// rate (total) from then on, on its own clock.
func (l *nodeLoad) offer(ctx context.Context, _ float64) {
	if l.done != nil {
		return
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		_, _ = l.gen.Run(ctx, profile, nil) // its counts are read while it runs
	}()
}

// counts are the requests sent so far and how they were answered.
func (l *nodeLoad) counts() loadgen.Counts { return l.gen.Counts() }

// describe sums up the requests sent so far and how they were answered.
func (l *nodeLoad) describe() string {
	c := l.counts()
	out := fmt.Sprintf("test/loadgen sent %d requests of %d queries to %s: %d answered, %d failed, %d skipped (in flight)",
		c.Sent, loadgen.DefaultConfig(l.url).Batch, l.url, c.Answered, c.Failed, c.Skipped)
	if f := l.gen.LastFailure(); f != "" {
		out += "; last failure: " + f
	}
	return out
}

func (l *nodeLoad) stop() {
	if l.done == nil {
		return
	}
	l.cancel()
	<-l.done
}
