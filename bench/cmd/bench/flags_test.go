package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntsParsesAnAscendingList(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{name: "a list with spaces parses", in: "0, 10000,100000", want: []int{0, 10000, 100000}},
		{name: "empty entries are skipped", in: "100,", want: []int{100}},
		{name: "sizes must ascend", in: "1000,100", wantErr: true},
		{name: "negative sizes are rejected", in: "-1", wantErr: true},
		{name: "words are rejected", in: "many", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ints(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ints(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("ints(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFullSetsTheFullSizes(t *testing.T) {
	o, err := parseFlags([]string{"--full"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{100, 1000, 5000}, o.cfg.Sizes); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 10000, 100000}, o.cfg.MemorySeries); diff != "" {
		t.Errorf("memory series (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1000, 10000, 50000}, o.cfg.Pods); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if !o.cfg.Scenarios["g"] {
		t.Error("--full does not run scenario g")
	}
}

func TestScenarioGRunsOnRequest(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.Scenarios["g"] || !o.cfg.Scenarios["a"] {
		t.Errorf("default scenarios = %v, want a–f without g", o.cfg.Scenarios)
	}
	if o, err = parseFlags([]string{"--full", "--scenarios=d"}); err != nil || o.cfg.Scenarios["g"] {
		t.Errorf("--full with --scenarios=d: %v, %v; want only d", o.cfg.Scenarios, err)
	}
}

func TestPodpilotArgsSplitOnSpaces(t *testing.T) {
	o, err := parseFlags([]string{"--podpilot-args", "--kube-api-qps=50  --kube-api-burst=100"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"--kube-api-qps=50", "--kube-api-burst=100"}, o.cfg.PodpilotArgs); diff != "" {
		t.Errorf("podpilot args (-want +got):\n%s", diff)
	}
}

func TestScenariosExtendTheDefaultTimeoutByWhatTheyMeasure(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want time.Duration
	}{
		{name: "without g the default stays 20 minutes", args: []string{"--scenarios=d"}, want: 20 * time.Minute},
		{name: "a adds its two mixes of nine targets", args: []string{"--scenarios=a", "--api-duration=15s"}, want: 26 * time.Minute},
		{name: "10k pods add 20 minutes", args: []string{"--scenarios=g", "--pods=1000,10000"}, want: 40 * time.Minute},
		{name: "p adds 40 minutes for its 26 replayed days", args: []string{"--scenarios=p"}, want: 60 * time.Minute},
		{name: "an explicit timeout wins", args: []string{"--scenarios=g", "--timeout=5m"}, want: 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if o.timeout != tt.want {
				t.Errorf("timeout = %s, want %s", o.timeout, tt.want)
			}
		})
	}
}

func TestScenarioGPodsAreRealisticUnlessMinimalIsAsked(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr bool
	}{
		{"the default is the realistic shape", nil, "realistic", false},
		{"minimal is the framework's one-container pod", []string{"--pod-shape=minimal"}, "minimal", false},
		{"another shape is refused", []string{"--pod-shape=huge"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want an error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && o.cfg.PodShape != tt.want {
				t.Errorf("pod shape %q, want %q", o.cfg.PodShape, tt.want)
			}
		})
	}
}
