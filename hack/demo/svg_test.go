package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// element is one start tag of the chart, with its attributes by local name
// and its character data.
type element struct {
	name  string
	attr  map[string]string
	text  string
	depth int
}

// parseSVG reads doc to the end with encoding/xml, failing the test if it is
// not well-formed, and returns its elements in document order.
func parseSVG(t *testing.T, doc string) []*element {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var all, open []*element
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}, depth: len(open)}
			if e.depth == 0 && tok.Name.Space != "http://www.w3.org/2000/svg" {
				t.Errorf("root element is in namespace %q, want the SVG namespace", tok.Name.Space)
			}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			all, open = append(all, e), append(open, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].text += string(tok)
			}
		}
	}
	if len(all) == 0 || all[0].name != "svg" {
		t.Fatalf("the chart's root element is not svg:\n%s", doc)
	}
	return all
}

// find returns the elements named name whose attributes include want.
func find(elems []*element, name string, want map[string]string) []*element {
	var out []*element
next:
	for _, e := range elems {
		if e.name != name {
			continue
		}
		for k, v := range want {
			if e.attr[k] != v {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

func TestRenderSVG(t *testing.T) {
	full := series(phaseOf("ramp", 1, 1, 2, 4), phaseOf("hold", 5, 5, 5), phaseOf("fall", 5, 4), phaseOf("settle", 2, 1))
	for i := range full {
		full[i].offeredPerPod = float64(1000 * (i + 1))
		full[i].served, full[i].servedOK = float64(900*i), i >= 2
	}
	full[6].servedOK = false // a gap in the middle splits the served line
	for i := range full {
		full[i].cpuUtil, full[i].cpuOK = int32(10*i), i >= 1
		full[i].ready = max(1, full[i].current-1)
	}
	tests := []struct {
		name     string
		samples  []sample
		subtitle []string
		// wantServedLines and wantCPULines are how many unbroken stretches
		// of served qps and of cpu Utilization the chart draws.
		wantServedLines, wantCPULines int
	}{
		{
			name:    "a full run with a gap in the served qps draws the served line in two pieces, and cpu from its first value",
			samples: full, wantServedLines: 2, wantCPULines: 1,
		},
		{name: "a single sample still makes a chart", samples: series(phaseOf("ramp", 1))},
		{
			name:     "markup in the subtitle is escaped",
			samples:  series(phaseOf("ramp", 1, 2)),
			subtitle: []string{`metrics: <cpu> & "memory" 50%`, "second line"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := renderSVG(tt.samples, tt.subtitle)
			elems := parseSVG(t, doc)
			c := newChart(tt.samples)

			yTarget := fmt.Sprintf("%.1f", c.yQPS(targetPerPod))
			if got := find(elems, "line", map[string]string{
				"stroke": colorTarget, "x1": fmt.Sprint(plotL), "x2": fmt.Sprint(plotR), "y1": yTarget, "y2": yTarget,
			}); len(got) != 1 {
				t.Errorf("found %d target lines across the plot at y=%s, want 1", len(got), yTarget)
			}
			if got := find(elems, "text", map[string]string{"fill": colorTarget}); len(got) != 1 || got[0].text != "target 2000" {
				t.Errorf("target labels = %v, want one reading \"target 2000\"", got)
			}

			steps := find(elems, "path", map[string]string{"stroke": colorReplicas, "fill": "none"})
			if len(steps) != 1 {
				t.Fatalf("found %d replicas step paths, want 1", len(steps))
			}
			d := steps[0].attr["d"]
			first := tt.samples[0]
			if start := fmt.Sprintf("M%.1f %.1f ", c.x(first.at), c.yReplicas(first.current)); !strings.HasPrefix(d, start) {
				t.Errorf("replicas path %q does not start at the first sample (%q)", d, start)
			}
			for _, s := range tt.samples[1:] {
				if step := fmt.Sprintf(" H%.1f V%.1f", c.x(s.at), c.yReplicas(s.current)); !strings.Contains(d, step) {
					t.Errorf("replicas path %q lacks the step to %d replicas at %s (%q)", d, s.current, clockString(s.at), step)
				}
			}
			if areas := find(elems, "path", map[string]string{"fill": colorReplicas}); len(areas) != 1 || !strings.HasPrefix(areas[0].attr["d"], d) {
				t.Errorf("want one shaded area under the replicas path, got %d", len(areas))
			}

			ready := find(elems, "path", map[string]string{"stroke": colorReady})
			if len(ready) != 1 {
				t.Fatalf("found %d pods Ready step paths, want 1", len(ready))
			}
			for _, s := range tt.samples[1:] {
				if step := fmt.Sprintf(" H%.1f V%.1f", c.x(s.at), c.yReplicas(s.ready)); !strings.Contains(ready[0].attr["d"], step) {
					t.Errorf("pods Ready path lacks the step to %d at %s (%q)", s.ready, clockString(s.at), step)
				}
			}

			if got := find(elems, "polyline", map[string]string{"stroke": colorServed}); len(got) != tt.wantServedLines {
				t.Errorf("found %d served qps lines, want %d", len(got), tt.wantServedLines)
			}
			cpuLines := find(elems, "polyline", map[string]string{"stroke": colorCPU})
			if len(cpuLines) != tt.wantCPULines {
				t.Errorf("found %d cpu Utilization lines, want %d", len(cpuLines), tt.wantCPULines)
			}
			cpuScale := find(elems, "text", map[string]string{"fill": colorCPU})
			if tt.wantCPULines == 0 && len(cpuScale) > 0 {
				t.Errorf("a chart without cpu values has a cpu scale: %v", cpuScale)
			}
			if got := find(elems, "polyline", map[string]string{"stroke": colorOffered}); len(got) != 1 ||
				len(strings.Fields(got[0].attr["points"])) != len(tt.samples) {
				t.Errorf("want one offered qps line with a point per sample, got %d lines", len(got))
			}

			for i, line := range tt.subtitle {
				if got := find(elems, "text", map[string]string{"y": fmt.Sprint(58 + i*17)}); len(got) != 1 || got[0].text != line {
					t.Errorf("subtitle line %d reads %v, want %q", i, got, line)
				}
			}
		})
	}
}

func TestTheCPUScalePutsTheCPUTargetOnTheTargetLine(t *testing.T) {
	samples := series(phaseOf("ramp", 1, 2))
	samples[1].cpuUtil, samples[1].cpuOK = cpuTargetPercent, true
	c := newChart(samples)
	if got, want := c.yCPU(cpuTargetPercent), c.yQPS(targetPerPod); got != want {
		t.Errorf("cpu at its target (%v%%) is drawn at y=%v, the qps target at y=%v; want the same line", cpuTargetPercent, got, want)
	}
	elems := parseSVG(t, renderSVG(samples, nil))
	want := fmt.Sprintf("%.1f", c.yQPS(targetPerPod)-3)
	var labels []string
	for _, e := range find(elems, "text", map[string]string{"fill": colorCPU}) {
		if e.attr["y"] == want {
			labels = append(labels, e.text)
		}
	}
	if diff := cmp.Diff([]string{"50%"}, labels); diff != "" {
		t.Errorf("cpu scale label on the target line (-want +got):\n%s", diff)
	}
}

func TestWriteSVG(t *testing.T) {
	dir := t.TempDir()
	t.Run("an empty series is an error and writes nothing", func(t *testing.T) {
		path := filepath.Join(dir, "empty", "chart.svg")
		if err := writeSVG(path, nil, nil); err == nil || !strings.Contains(err.Error(), "no samples") {
			t.Errorf("writeSVG(no samples) = %v, want a no samples error", err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("writeSVG(no samples) created %s (stat: %v)", filepath.Dir(path), err)
		}
	})
	t.Run("the file holds the rendered chart, in a directory made for it", func(t *testing.T) {
		path := filepath.Join(dir, "new", "chart.svg")
		samples := series(phaseOf("ramp", 1, 2))
		if err := writeSVG(path, samples, []string{"note"}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := renderSVG(samples, []string{"note"}); string(got) != want {
			t.Errorf("%s differs from renderSVG's output", path)
		}
	})
}
