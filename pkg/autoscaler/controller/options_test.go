package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestFlagsSetOptions(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{"--autoscaler-sync-period=30s", "--autoscaler-workers=8", "--autoscaler-downscale-stabilization=1m",
		"--autoscaler-tolerance=0.2", "--autoscaler-cpu-initialization-period=1m", "--autoscaler-initial-readiness-delay=10s", "--autoscaler-enabled=false",
		"--kube-api-qps=200", "--kube-api-burst=400", "--autoscaler-per-object-metrics=false",
		"--autoscaler-align-to-scrapes=false", "--autoscaler-scrape-margin=2s"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Options{SyncPeriod: 30 * time.Second, Workers: 8, DownscaleStabilization: time.Minute, Tolerance: 0.2,
		CPUInitializationPeriod: time.Minute, InitialReadinessDelay: 10 * time.Second, KubeAPIQPS: 200, KubeAPIBurst: 400,
		ScrapeMargin: 2 * time.Second}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	if errs := NewOptions().Validate(); len(errs) != 0 {
		t.Errorf("defaults: %v, want valid", errs)
	}
	o := &Options{SyncPeriod: 0, Workers: 0, DownscaleStabilization: -1, Tolerance: -0.1, CPUInitializationPeriod: -1, InitialReadinessDelay: -1,
		KubeAPIQPS: 0, KubeAPIBurst: 0, ScrapeMargin: -1}
	if errs := o.Validate(); len(errs) != 9 {
		t.Errorf("got %d errors, want 9: %v", len(errs), errs)
	}
}
