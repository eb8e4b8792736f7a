package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagsNode(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantNode string
		wantErr  string
	}{
		{name: "without --node the demo runs on kwok (hack/demo.sh's preflight passes --node=real)", args: nil, wantNode: nodeKwok},
		{name: "--node=real is the real node", args: []string{"--node=real"}, wantNode: nodeReal},
		{name: "any other node is a usage error naming both", args: []string{"--node=docker"}, wantErr: `--node="docker": want real or kwok`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%q) error = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantNode, o.node); diff != "" {
				t.Errorf("node (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheHeaderAndTheChartSayWhichNodeRan(t *testing.T) {
	tests := []struct {
		name       string
		node       string
		wantHeader string
		wantChart  string
	}{
		{name: "the kwok demo says its pods run nothing", node: nodeKwok,
			wantHeader: "a kwok node", wantChart: "kwok node: the pods run nothing"},
		{name: "the real-node demo says podpilot is installed by its chart and the pods are test/workload", node: nodeReal,
			wantHeader: "podpilot is installed by its Helm chart", wantChart: "real node: test/workload pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &demo{out: &out, opts: options{node: tt.node}}
			d.printHeader()
			if !strings.Contains(out.String(), tt.wantHeader) || strings.Contains(out.String(), "%!") {
				t.Errorf("header lacks %q or has a formatting error:\n%s", tt.wantHeader, out.String())
			}
			if notes := strings.Join(d.chartNotes(), "\n"); !strings.Contains(notes, tt.wantChart) {
				t.Errorf("chart notes lack %q:\n%s", tt.wantChart, notes)
			}
		})
	}
}
