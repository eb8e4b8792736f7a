// Command nodebench is `make bench-node`: podpilot installed by its chart on
// the real node (PODPILOT_NODE=real) and measured as its users meet it: the
// image's size, the pod's memory and cpu at idle and busy, cpu Utilization
// as podpilot computes it against cAdvisor's raw series and metrics-server,
// and (with the workload image) a load step's time to new pods Ready under
// a PodAutoscaler against the stock HPA. It writes
// bench/results/node-<date>-<sha>.md. Figures only: nothing is asserted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// options are the command line.
type options struct {
	tag      string
	outDir   string
	stateDir string
	window   time.Duration
	timeout  time.Duration
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := framework.RepoRoot()
	var o options
	fs := flag.NewFlagSet("nodebench", flag.ContinueOnError)
	fs.StringVar(&o.tag, "tag", os.Getenv("IMAGE_TAG"), "tag of the podpilot image (make images) to install (also IMAGE_TAG)")
	fs.StringVar(&o.outDir, "out", filepath.Join(root, "bench", "results"), "directory of the report")
	fs.StringVar(&o.stateDir, "state-dir", filepath.Join(root, "_output", "bench-node-cluster"), "state directory of the cluster")
	fs.DurationVar(&o.window, "window", 90*time.Second, "length of each idle or busy measurement")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.tag == "" {
		fmt.Fprintln(os.Stderr, "nodebench: --tag (or IMAGE_TAG) is required")
		return 2
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	path, err := bench(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodebench:", err)
		return 1
	}
	fmt.Printf("\nreport: %s\n", path)
	return 0
}

// bench starts the cluster, installs podpilot, runs every section and
// writes the report.
func bench(ctx context.Context, o options) (string, error) {
	_ = os.RemoveAll(o.stateDir)
	c, err := framework.UpRealNode(ctx, o.stateDir, "")
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Down(context.Background()) }()
	e := &env{c: c, o: o, images: filepath.Join(framework.RepoRoot(), "_output", "images")}
	if err := c.ImportImage(ctx, filepath.Join(e.images, "podpilot.tar")); err != nil {
		return "", err
	}
	if err := c.InstallChart(ctx, framework.ChartInstall{Tag: o.tag, ExtraArgs: []string{"--autoscaler-sync-period=5s"}}); err != nil {
		return "", err
	}
	r := report.Report{Title: "podpilot on the real node", Machine: machine(), Settings: []report.KV{
		{Key: "image tag", Value: o.tag}, {Key: "window", Value: o.window.String()},
		{Key: "podpilot", Value: "2 replicas from charts/podpilot, --autoscaler-sync-period=5s (the HPA controller's too), requests 100m/128Mi"},
	}}
	for _, section := range []func(context.Context) (report.Section, error){e.image, e.footprint, e.utilization, e.loadStep} {
		s, err := section(ctx)
		if err != nil {
			s.Notes = append(s.Notes, "failed: "+err.Error())
			fmt.Fprintf(os.Stderr, "nodebench: %s: %v\n", s.Title, err)
		}
		r.Sections = append(r.Sections, s)
		r.Summary = append(r.Summary, s.Headline...)
	}
	if n, err := c.GuardPackets(ctx); err != nil || n != 0 {
		r.Summary = append(r.Summary, fmt.Sprintf("GUARDS: %d packets would have left the machine (%v)", n, err))
	}
	fmt.Print(r.Text())
	return write(o.outDir, r)
}

func write(dir string, r report.Report) (string, error) {
	sha, _ := exec.Command("git", "-C", framework.RepoRoot(), "rev-parse", "--short", "HEAD").Output()
	path := filepath.Join(dir, fmt.Sprintf("node-%s-%s.md", time.Now().Format("2006-01-02"), strings.TrimSpace(string(sha))))
	if err := os.WriteFile(path, []byte(r.Markdown()), 0o644); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return path, nil
}

func machine() []report.KV {
	kernel, _ := exec.Command("uname", "-r").Output()
	return []report.KV{
		{Key: "cores", Value: fmt.Sprint(numCPU())},
		{Key: "kernel", Value: strings.TrimSpace(string(kernel))},
		{Key: "node", Value: "kubelet v1.36.3, containerd 1.6.20, runc 1.1.5, cgroup v1"},
	}
}
