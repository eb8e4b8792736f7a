// Command demo is podpilot's `make demo`. It brings up the real local control
// plane (hack/local-up.sh) in _output/demo-cluster, installs podpilot,
// applies the design seed's example (Deployment vg1-vanguard and the
// PodAutoscaler hpa-vg1-vanguard from manifests/examples, unchanged), drives
// a load profile, prints one table row per 5 s tick (offered load, the
// per-pod qps served by custom.metrics.k8s.io, cpu Utilization and memory as
// the PodAutoscaler read them, desired and current replicas, pods Ready, the
// limiting condition), and writes the same series as an SVG chart to
// _output/demo/podpilot-demo.svg. It shows both halves of podpilot: the
// metrics API server and the embedded autoscaler.
//
// --node chooses the node (hack/demo.sh runs hack/node-preflight.sh to
// choose): "real" runs a kubelet node; podpilot is installed by its Helm
// chart (two replicas of the image hack/build-image.sh built), vg1-vanguard
// runs test/workload, and test/loadgen sends the load from the host to its
// Service's ClusterIP through kube-proxy. "kwok" runs bin/podpilot on the
// host against pods that run nothing, and a host exporter plays the workload.
//
// Usage (from the repository root, after `make build`; the real node also
// needs `make node-tools images`):
//
//	hack/demo.sh [--keep] [--state-dir DIR] [--svg FILE]
//	_output/bin/demo --node=real|kwok [--image-tag TAG] [--keep] ...
//
// --keep (or KEEP=1) leaves the cluster, podpilot and the load running.
//
// Exit codes: 0 the demo showed the expected scaling; 1 it ran but the
// scaling did not happen (see verdict); 2 usage error or a missing
// prerequisite (bin/podpilot, an image); 3 the cluster, podpilot or an API
// call failed; 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Exit codes; see the package comment.
const (
	exitOK          = 0
	exitNoScaling   = 1
	exitUsage       = 2
	exitFailure     = 3
	exitInterrupted = 130
)

// demoTimeout bounds the whole run; the demo itself takes about 5–6 minutes.
const demoTimeout = 12 * time.Minute

var (
	// errNoScaling means the demo ran but did not show the expected scaling.
	errNoScaling = errors.New("the expected scaling did not happen")
	// errPrerequisite means something the demo needs is missing.
	errPrerequisite = errors.New("missing prerequisite")
)

// options are the command line.
type options struct {
	keep     bool
	stateDir string
	svgPath  string
	// node is the node the demo runs on: nodeKwok or nodeReal.
	node string
	// imageTag is the tag of the images hack/build-image.sh built (real node).
	imageTag string
	// serveLoad, when set, makes this process the load that --keep leaves
	// behind for the cluster in that state directory (internal).
	serveLoad string
	// resources makes the left-behind load export cpu and memory series too (internal).
	resources bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	root := framework.RepoRoot()
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.keep, "keep", os.Getenv("KEEP") == "1", "leave the cluster, podpilot and the load running at the end (also KEEP=1)")
	fs.StringVar(&o.stateDir, "state-dir", filepath.Join(root, "_output", "demo-cluster"), "state directory of the demo's local control plane")
	fs.StringVar(&o.svgPath, "svg", filepath.Join(root, "_output", "demo", "podpilot-demo.svg"), "where to write the SVG chart")
	fs.StringVar(&o.node, "node", nodeKwok, "the node: "+nodeReal+" (a kubelet with containerd; needs root, `make node-tools images`) or "+nodeKwok)
	fs.StringVar(&o.imageTag, "image-tag", envOr("IMAGE_TAG", "dev"), "tag of the podpilot and workload images to run on the real node (also IMAGE_TAG)")
	fs.StringVar(&o.serveLoad, "serve-load", "", "internal: serve the settled load for the cluster in this state directory until SIGTERM")
	fs.BoolVar(&o.resources, "serve-load-resources", false, "internal: with --serve-load, export cpu and memory series too")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.node != nodeKwok && o.node != nodeReal {
		return o, fmt.Errorf("--node=%q: want %s or %s", o.node, nodeReal, nodeKwok)
	}
	var err error
	if o.stateDir, err = filepath.Abs(o.stateDir); err != nil {
		return o, fmt.Errorf("state dir: %w", err)
	}
	if o.svgPath, err = filepath.Abs(o.svgPath); err != nil {
		return o, fmt.Errorf("svg path: %w", err)
	}
	return o, nil
}

// envOr returns the environment variable key, or def if it is empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	opts, err := parseFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return exitUsage
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{}) // the local APIServices' FQDN EndpointSlice is deprecated
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.serveLoad != "" {
		if err := serveLoad(ctx, opts.serveLoad, opts.resources); err != nil {
			fmt.Fprintln(os.Stderr, "demo load:", err)
			return exitFailure
		}
		return exitOK
	}
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	d := &demo{opts: opts, out: os.Stdout, namespace: demoNamespace}
	err = d.run(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errNoScaling):
		fmt.Fprintf(os.Stderr, "\nDEMO FAILED: %v\n", err)
		return exitNoScaling
	case errors.Is(err, errPrerequisite):
		fmt.Fprintf(os.Stderr, "\ndemo: %v\n", err)
		return exitUsage
	case errors.Is(ctx.Err(), context.Canceled):
		fmt.Fprintf(os.Stderr, "\ndemo interrupted: %v\n", err)
		return exitInterrupted
	default:
		fmt.Fprintf(os.Stderr, "\nDEMO FAILED: %v\n", err)
		return exitFailure
	}
}
