// Command loadgen offers queries to test/workload at the rate of a load
// profile and prints, each second, the offered rate and how many requests
// were sent, answered, failed and skipped. It stops by itself at the end of
// the profile (or --max-duration, or --max-requests).
//
// It sends only to the URL it is given, and only if that URL's host is a
// loopback or private IP address: it is meant for a workload on this machine
// or a Service's ClusterIP in a local cluster, nothing else.
//
// Usage:
//
//	loadgen --target=http://10.0.0.17/query --profile=0-6000:30s,6000:60s,6000-500:30s
//
// Exit codes: 0 the profile ran; 1 it was interrupted or nothing was
// answered; 2 usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/loadgen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := loadgen.DefaultConfig("")
	fs.StringVar(&cfg.Target, "target", "", "the workload's query URL, http://IP[:PORT]/query; a loopback or private IP only")
	spec := fs.String("profile", "0-2000:10s,2000:20s,2000-0:10s", "stages FROM[-TO]:DURATION in queries per second, comma-separated")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "queries per request")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "requests waiting for an answer at most; more are skipped")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per request")
	fs.Int64Var(&cfg.MaxRequests, "max-requests", cfg.MaxRequests, "stop after this many requests are due")
	fs.DurationVar(&cfg.MaxDuration, "max-duration", cfg.MaxDuration, "stop after this long")
	fs.DurationVar(&cfg.Reconnect, "reconnect", cfg.Reconnect, "close idle connections this often, so a Service spreads them over its pods")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	p, err := loadgen.ParseProfile(*spec)
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 2
	}
	g, err := loadgen.New(cfg, clock.RealClock{})
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "%6s  %8s  %6s  %8s  %6s  %7s\n", "time", "offered", "sent", "answered", "failed", "skipped")
	total, err := g.Run(ctx, p, func(s loadgen.Second) {
		fmt.Fprintf(stdout, "%5.0fs  %8.0f  %6d  %8d  %6d  %7d\n", s.At.Seconds(), s.Offered, s.Sent, s.Answered, s.Failed, s.Skipped)
	})
	fmt.Fprintf(stdout, "total: %d requests of %d queries due, %d sent, %d answered, %d failed, %d skipped\n",
		total.Due, cfg.Batch, total.Sent, total.Answered, total.Failed, total.Skipped)
	if total.Failed > 0 {
		fmt.Fprintln(stdout, "last failure:", g.LastFailure())
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 1
	}
	if total.Answered == 0 {
		fmt.Fprintln(stderr, "loadgen: nothing was answered")
		return 1
	}
	return 0
}
