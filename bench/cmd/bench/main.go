// Command bench is podpilot's `make bench`: on the real local control plane
// (hack/local-up.sh through test/e2e/framework) it measures the metrics API's
// per-request cost, stock HPAs and PodAutoscalers at N, reaction time and
// memory, each against a baseline measured in the same run, runs the Go
// benchmarks, prints a table and writes bench/results/<date>-<sha>.md with
// SVG plots beside it. See docs/performance.md.
//
// Exit codes: 0 every scenario ran; 1 a scenario failed (the report says
// which and still holds the others); 2 usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	opts, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{}) // the local APIServices' FQDN EndpointSlice is deprecated
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	path, failed, err := benchmark(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Printf("\nreport: %s\n", path)
	if failed {
		fmt.Fprintln(os.Stderr, "bench: some scenarios failed; see the report")
		return 1
	}
	return 0
}
