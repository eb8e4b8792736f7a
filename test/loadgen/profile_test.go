package loadgen

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rampHoldFall is 0 → 6000 qps over 30s, 6000 for 60s, 6000 → 1000 over 20s.
var rampHoldFall = Profile{
	{Name: "ramp", Duration: 30 * time.Second, From: 0, To: 6000},
	{Name: "hold", Duration: 60 * time.Second, From: 6000, To: 6000},
	{Name: "fall", Duration: 20 * time.Second, From: 6000, To: 1000},
}

func TestProfileAt(t *testing.T) {
	type got struct {
		QPS   float64
		Stage int
	}
	tests := []struct {
		name    string
		elapsed time.Duration
		want    got
	}{
		{"the profile starts at the first stage's From", 0, got{0, 0}},
		{"a ramp is linear: half way up is half the rate", 15 * time.Second, got{3000, 0}},
		{"a stage ends where the next begins", 30 * time.Second, got{6000, 1}},
		{"a hold keeps its rate", 75 * time.Second, got{6000, 1}},
		{"a fall is linear too", 100 * time.Second, got{3500, 2}},
		{"past the end, the last rate and len(profile)", 200 * time.Second, got{1000, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qps, stage := rampHoldFall.At(tt.elapsed)
			if diff := cmp.Diff(tt.want, got{qps, stage}); diff != "" {
				t.Errorf("At(%s) (-want +got):\n%s", tt.elapsed, diff)
			}
		})
	}
}

func TestProfileQueries(t *testing.T) {
	tests := []struct {
		name    string
		elapsed time.Duration
		want    float64
	}{
		{"nothing is offered at the start", 0, 0},
		{"a ramp offers the area under it: ½ · 10s · 2000 qps", 10 * time.Second, 10000},
		{"a whole ramp: ½ · 30s · 6000 qps", 30 * time.Second, 90000},
		{"a hold adds rate × time", 40 * time.Second, 90000 + 60000},
		{"a fall offers its trapezoid: (6000+1000)/2 · 20s", 110 * time.Second, 90000 + 360000 + 70000},
		{"nothing more is offered past the end", time.Hour, 90000 + 360000 + 70000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rampHoldFall.Queries(tt.elapsed); math.Abs(got-tt.want) > 1e-6 {
				t.Errorf("Queries(%s) = %v, want %v", tt.elapsed, got, tt.want)
			}
		})
	}
}

func TestProfileQueriesIsTheSumOfItsRate(t *testing.T) {
	// Summing At over 1ms steps comes within rounding of the exact integral.
	var sum float64
	for e := time.Duration(0); e < rampHoldFall.Duration(); e += time.Millisecond {
		qps, _ := rampHoldFall.At(e + time.Millisecond/2)
		sum += qps / 1000
	}
	if want := rampHoldFall.Queries(rampHoldFall.Duration()); math.Abs(sum-want) > 1 {
		t.Errorf("sum of At over the profile = %v, Queries = %v", sum, want)
	}
}

func TestParseProfile(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		want    Profile
		wantErr bool
	}{
		{
			name: "stages are FROM-TO:DURATION or FROM:DURATION, named after their direction",
			spec: "0-6000:30s, 6000:1m,6000-1000:20s",
			want: rampHoldFall,
		},
		{name: "a stage without a duration is refused", spec: "0-6000", wantErr: true},
		{name: "a stage with a bad rate is refused", spec: "x-6000:30s", wantErr: true},
		{name: "a stage with a bad duration is refused", spec: "100:soon", wantErr: true},
		{name: "a stage that lasts nothing is refused", spec: "100:0s", wantErr: true},
		{name: "a negative rate is refused", spec: "-100:10s", wantErr: true},
		{name: "a rate above MaxQPS is refused", spec: "0-1000000:10s", wantErr: true},
		{name: "an empty profile is refused", spec: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProfile(tt.spec)
			if tt.wantErr {
				if !errors.Is(err, ErrProfile) {
					t.Errorf("ParseProfile(%q) error = %v, want ErrProfile", tt.spec, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseProfile(%q): %v", tt.spec, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseProfile(%q) (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

func TestOfferedIsTheMeanRateOfTheStretch(t *testing.T) {
	tests := []struct {
		name     string
		from, to time.Duration
		want     float64
	}{
		{"one second of a ramp offers its mid-point rate", 10 * time.Second, 11 * time.Second, 2100},
		{"one second of a hold offers the hold's rate", 50 * time.Second, 51 * time.Second, 6000},
		{"a stretch past the end offers nothing", 200 * time.Second, 201 * time.Second, 0},
		{"an empty stretch offers nothing", 5 * time.Second, 5 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := offered(rampHoldFall, tt.from, tt.to); math.Abs(got-tt.want) > 1e-6 {
				t.Errorf("offered(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
}
