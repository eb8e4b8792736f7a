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
		"--autoscaler-align-to-scrapes=false", "--autoscaler-scrape-margin=2s", "--autoscaler-prediction-refresh=10m",
		"--autoscaler-prediction-max-models=50"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Options{SyncPeriod: 30 * time.Second, Workers: 8, DownscaleStabilization: time.Minute, Tolerance: 0.2,
		CPUInitializationPeriod: time.Minute, InitialReadinessDelay: 10 * time.Second, KubeAPIQPS: 200, KubeAPIBurst: 400,
		ScrapeMargin: 2 * time.Second, PredictionRefresh: 10 * time.Minute, PredictionMaxModels: 50}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	if errs := NewOptions().Validate(); len(errs) != 0 {
		t.Errorf("defaults: %v, want valid", errs)
	}
	o := &Options{SyncPeriod: 0, Workers: 0, DownscaleStabilization: -1, Tolerance: -0.1, CPUInitializationPeriod: -1, InitialReadinessDelay: -1,
		KubeAPIQPS: 0, KubeAPIBurst: 0, ScrapeMargin: -1, PredictionRefresh: 0, PredictionMaxModels: 0}
	if errs := o.Validate(); len(errs) != 11 {
		t.Errorf("got %d errors, want 11: %v", len(errs), errs)
	}
}

func TestTheDownscaleWindowMustFitTheRecommendationsAStatusHolds(t *testing.T) {
	tests := []struct {
		name          string
		period, flag  time.Duration
		wantViolation bool
	}{
		{name: "the defaults: 5m over 15s is 20 rounds", period: 15 * time.Second, flag: 5 * time.Minute},
		{name: "1000 rounds fit", period: time.Second, flag: 1000 * time.Second},
		{name: "1001 rounds do not", period: time.Second, flag: 1001 * time.Second, wantViolation: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.SyncPeriod, o.DownscaleStabilization = tt.period, tt.flag
			if got := len(o.Validate()) > 0; got != tt.wantViolation {
				t.Errorf("Validate() = %v, want a violation: %v", o.Validate(), tt.wantViolation)
			}
		})
	}
}

func TestTheSyncPeriodSetsTheRoundDeadlinesAndTheLivenessLimit(t *testing.T) {
	o := NewOptions()
	got := []time.Duration{o.roundTimeout(), o.readTimeout(), o.livenessLimit()}
	want := []time.Duration{15 * time.Second, 11250 * time.Millisecond, 45 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round, read deadlines and liveness limit at the default period (-want +got):\n%s", diff)
	}
	if got := o.namespaceShare(); got != 8 {
		t.Errorf("namespace share of 16 workers = %d, want 8", got)
	}
}

func TestTheToleranceFlagMustBeAFiniteNonNegativeNumber(t *testing.T) {
	tests := []struct {
		name  string
		flag  string
		valid bool
	}{
		{name: "0.1, the default, is valid", flag: "0.1", valid: true},
		{name: "0 is valid", flag: "0", valid: true},
		{name: "a negative tolerance is invalid", flag: "-0.1"},
		{name: "NaN is invalid: it passes every comparison", flag: "NaN"},
		{name: "+Inf is invalid", flag: "+Inf"},
		{name: "-Inf is invalid", flag: "-Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse([]string{"--autoscaler-tolerance=" + tt.flag}); err != nil {
				t.Fatal(err)
			}
			if errs := o.Validate(); (len(errs) == 0) != tt.valid {
				t.Errorf("Validate() = %v, want valid: %v", errs, tt.valid)
			}
		})
	}
}

func TestThePredictionRefreshMustKeepEveryForecastWithinTheModelsHorizon(t *testing.T) {
	tests := []struct {
		name  string
		flag  string
		valid bool
	}{
		{name: "5m, the default, is valid", flag: "5m", valid: true},
		{name: "1m is the shortest", flag: "1m", valid: true},
		{name: "59s is too short", flag: "59s"},
		{name: "2h30m is the longest: 2 × 2h30m + the longest lead 1h = the 6h horizon", flag: "2h30m", valid: true},
		{name: "2h31m would forecast past the horizon at the longest lead", flag: "2h31m"},
		{name: "a day is invalid", flag: "24h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse([]string{"--autoscaler-prediction-refresh=" + tt.flag}); err != nil {
				t.Fatal(err)
			}
			if errs := o.Validate(); (len(errs) == 0) != tt.valid {
				t.Errorf("Validate() = %v, want valid: %v", errs, tt.valid)
			}
		})
	}
}
