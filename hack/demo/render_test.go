package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// columns splits a table row on the two or more spaces between its columns.
func columns(row string) []string {
	return regexp.MustCompile(` {2,}`).Split(strings.TrimSpace(row), -1)
}

func TestTableRow(t *testing.T) {
	tests := []struct {
		name string
		s    sample
		want []string
	}{
		{
			name: "a served value is rounded to whole qps, cpu is a percentage, memory in Mi, and pods shows ready/current and one ■ per replica",
			s: sample{at: 65 * time.Second, phase: "hold", offered: 12000, offeredPerPod: 3000, served: 2874.4, servedOK: true,
				cpuUtil: 61, cpuOK: true, memory: 175.4 * (1 << 20), memoryOK: true,
				desired: 5, current: 4, ready: 3, condition: "TooManyReplicas"},
			want: []string{"1:05", "hold", "12000", "3000", "2874", "61%", "175Mi", "5", "3/4 ■■■■", "TooManyReplicas"},
		},
		{
			name: "nothing served or read shows -, not 0",
			s: sample{at: 0, phase: "ramp", offered: 0, offeredPerPod: 0, served: 0, servedOK: false,
				desired: 1, current: 1, ready: 1, condition: "ReadyForNewScale"},
			want: []string{"0:00", "ramp", "0", "0", "-", "-", "-", "1", "1/1 ■", "ReadyForNewScale"},
		},
		{
			name: "offered qps are rounded, and a condition with spaces is the last column verbatim",
			s: sample{at: 137 * time.Second, phase: "fall", offered: 8333.6, offeredPerPod: 1666.7, served: 0.4, servedOK: true,
				cpuUtil: 0, cpuOK: true, memory: 64 << 20, memoryOK: true,
				desired: 5, current: 5, ready: 5, condition: "ScalingActive=False: FailedGetPodsMetric"},
			want: []string{"2:17", "fall", "8334", "1667", "0", "0%", "64Mi", "5", "5/5 ■■■■■", "ScalingActive=False: FailedGetPodsMetric"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, columns(tableRow(tt.s))); diff != "" {
				t.Errorf("tableRow() columns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTableRowLinesUpUnderTheHeader(t *testing.T) {
	s := sample{at: 65 * time.Second, phase: "settle", offered: 12000, offeredPerPod: 3000, served: 2874, servedOK: true,
		cpuUtil: 100, cpuOK: true, memory: 256 << 20, memoryOK: true,
		desired: 5, current: 4, ready: 3, condition: "TooManyReplicas"}
	lines := strings.Split(tableHeader(), "\n")
	head := lines[len(lines)-2]
	want := " 1:05  settle    12000         3000        2874  100%    256Mi        5  3/4 ■■■■     TooManyReplicas"
	if got := tableRow(s); got != want {
		t.Errorf("tableRow() =\n%q\nwant\n%q", got, want)
	}
	if diff := cmp.Diff(
		[]string{"time", "phase", "offered", "offered/pod", "served/pod", "cpu", "mem/pod", "desired", "pods", "condition"},
		columns(head)); diff != "" {
		t.Fatalf("header columns (-want +got):\n%s", diff)
	}
	// Numbers are right-aligned: each ends where its heading ends.
	row := []rune(want)
	for _, col := range []string{"offered", "offered/pod", "served/pod", "cpu", "mem/pod", "desired"} {
		end := len([]rune(head[:strings.Index(head, " "+col+" ")+1+len(col)]))
		if row[end-1] == ' ' || row[end] != ' ' {
			t.Errorf("column %s ends at %d in the header, but the row has %q there", col, end, string(row[end-3:end+1]))
		}
	}
	if rule := lines[len(lines)-1]; strings.Trim(rule, "─") != "" {
		t.Errorf("the header's last line is %q, want a rule", rule)
	}
}

func TestClockString(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{name: "zero is 0:00", d: 0, want: "0:00"},
		{name: "seconds are two digits", d: 5 * time.Second, want: "0:05"},
		{name: "minutes are not padded", d: 65 * time.Second, want: "1:05"},
		{name: "sub-second times round to the nearest second", d: 4*time.Minute + 59*time.Second + 600*time.Millisecond, want: "5:00"},
		{name: "past an hour minutes keep counting", d: 61 * time.Minute, want: "61:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clockString(tt.d); got != tt.want {
				t.Errorf("clockString(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestRescales(t *testing.T) {
	tests := []struct {
		name    string
		samples []sample
		want    []string
	}{
		{name: "no change is no rescale", samples: series(phaseOf("ramp", 1, 1, 1)), want: nil},
		{name: "a single sample is no rescale", samples: series(phaseOf("ramp", 1)), want: nil},
		{
			name:    "every change of the Deployment's replicas is listed with its time and phase",
			samples: series(phaseOf("ramp", 1, 1, 4), phaseOf("hold", 5, 5), phaseOf("settle", 5, 2, 1)),
			want:    []string{"1→4 at 0:10 (ramp)", "4→5 at 0:15 (hold)", "5→2 at 0:30 (settle)", "2→1 at 0:35 (settle)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, rescales(tt.samples)); diff != "" {
				t.Errorf("rescales() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintSummary(t *testing.T) {
	ok := series(phaseOf("ramp", 1, 4), phaseOf("hold", 5, 5), phaseOf("settle", 2, 1))
	for i := range ok {
		ok[i].offered, ok[i].served = 1000, 480
	}
	ok[2].served = 2950.6
	tests := []struct {
		name      string
		samples   []sample
		resources bool
		node      string
		reasons   []string
		load      offeredLoad
		verdict   error
		want      []string
	}{
		{
			name:    "a passing run says what scaled and states OK with the hold's peak and the end",
			samples: ok,
			want: []string{
				"  run time:     4m31s (set-up included), load profile 0:25",
				"  rescales:     1→4 at 0:05 (ramp), 4→5 at 0:10 (hold), 5→2 at 0:20 (settle), 2→1 at 0:25 (settle)",
				"  peak:         5 replicas during the hold (max 5), served qps peaked at 2951 per pod",
				"  end:          1 replica at 1000 qps offered (480 served per pod)",
				"  metrics:      zdns_vanguard_qps 2000/pod (the example's cpu/memory targets were left out: no metrics.k8s.io)",
				"  result:       OK: scaled up to 5 and back down to 1 once the load fell",
			},
		},
		{
			name:      "a failing run states FAILED with the verdict, and the metrics line names cpu and memory when kept",
			samples:   series(phaseOf("ramp", 1, 2), phaseOf("hold", 3), phaseOf("settle", 3)),
			resources: true,
			verdict:   fmt.Errorf("%w: vg1-vanguard peaked at 3 replicas during the hold, want at least 4", errNoScaling),
			want: []string{
				"  peak:         3 replicas during the hold (max 5), served qps peaked at 0 per pod",
				"  end:          3 replicas at 0 qps offered (0 served per pod)",
				"  metrics:      zdns_vanguard_qps 2000/pod, cpu 50%, memory 256Mi (cpu and memory from metrics.k8s.io)",
				"  result:       FAILED: the expected scaling did not happen: vg1-vanguard peaked at 3 replicas during the hold, want at least 4",
			},
		},
		{
			name:    "a run that never rescaled has an empty rescales line",
			samples: series(phaseOf("settle", 1, 1)),
			verdict: errors.New("no scaling"),
			want:    []string{"  rescales:     \n"},
		},
		{
			name:    "on the real node the summary names the containers' metrics, what decided each rescale, what the load did, and the guards",
			samples: ok,
			node:    nodeReal,
			reasons: []string{"0:40 New size: 3; reason: cpu resource utilization (percentage of request) above target"},
			load:    describedLoad("test/loadgen sent 9000 requests of 50 queries"),
			want: []string{
				"  metrics:      zdns_vanguard_qps 2000/pod, cpu 50%, memory 256Mi (the containers' own, from cAdvisor via podpilot's metrics.k8s.io)",
				"  decided by:   0:40 New size: 3; reason: cpu resource utilization (percentage of request) above target",
				"  load:         test/loadgen sent 9000 requests of 50 queries",
				"  guards:       0 packets would have left the machine",
				"  result:       OK: scaled up to 5 and back down to 1 once the load fell",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &demo{out: &out, samples: tt.samples, resources: tt.resources, opts: options{node: tt.node},
				rescaleReasons: tt.reasons, load: tt.load}
			d.printSummary(4*time.Minute+31*time.Second+400*time.Millisecond, tt.verdict)
			got := out.String()
			if !strings.HasPrefix(got, "\nSummary\n=======\n") {
				t.Errorf("summary does not start with its heading:\n%s", got)
			}
			for _, line := range tt.want {
				if !strings.Contains(got, line) {
					t.Errorf("summary lacks %q:\n%s", line, got)
				}
			}
		})
	}
}

func TestReplicasString(t *testing.T) {
	tests := []struct {
		name string
		n    int32
		want string
	}{
		{name: "one is singular", n: 1, want: "1 replica"},
		{name: "zero is plural", n: 0, want: "0 replicas"},
		{name: "more than one is plural", n: 5, want: "5 replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replicasString(tt.n); got != tt.want {
				t.Errorf("replicasString(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

// describedLoad is an offeredLoad that only describes itself.
type describedLoad string

func (l describedLoad) offer(context.Context, float64) {}
func (l describedLoad) stop()                          {}
func (l describedLoad) describe() string               { return string(l) }
