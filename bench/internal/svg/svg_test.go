package svg

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// wellFormed fails the test unless doc parses as XML.
func wellFormed(t *testing.T, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
	}
}

func TestCDFDrawsOneStepPathPerNonEmptySample(t *testing.T) {
	doc := CDF{
		Title: "latency <pods/*>", XLabel: "ms", LogX: true,
		Samples: []Sample{{Name: "direct", Values: []float64{3, 1, 2}}, {Name: "raw", Values: []float64{0.5, 0.7}}, {Name: "none"}},
	}.Render()
	wellFormed(t, doc)
	if got := strings.Count(doc, "<path d=\"M"); got != 1+2 { // the frame and two samples
		t.Errorf("%d paths, want 3 (frame + 2 samples)", got)
	}
	for _, want := range []string{"direct (n=3)", "none (n=0)", "latency &lt;pods/*&gt;", ">0.1<", ">10<"} {
		if !strings.Contains(doc, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func TestCDFOfNothingStillRenders(t *testing.T) {
	wellFormed(t, CDF{Title: "empty", LogX: true}.Render())
	wellFormed(t, CDF{Title: "empty"}.Render())
}

func TestLineLeavesAGapForMissingPoints(t *testing.T) {
	doc := Line{
		Title: "queries per round", X: []float64{100, 1000, 5000},
		Series: []Series{{Name: "HPA", Y: []float64{100, 1000, 5000}}, {Name: "PA", Y: []float64{10, math.NaN(), 10}}},
	}.Render()
	wellFormed(t, doc)
	if got := strings.Count(doc, "<polyline"); got != 1 {
		t.Errorf("%d polylines, want 1 (PA has no two adjacent points)", got)
	}
	if got := strings.Count(doc, "<circle"); got != 5 {
		t.Errorf("%d points, want 5", got)
	}
}

func TestNiceStepIsOneTwoOrFiveTimesAPowerOfTen(t *testing.T) {
	tests := []struct {
		span float64
		n    int
		want float64
	}{
		{span: 100, n: 5, want: 20},
		{span: 7, n: 6, want: 2},
		{span: 0.3, n: 6, want: 0.05},
		{span: 0, n: 6, want: 1},
	}
	for _, tt := range tests {
		if got := niceStep(tt.span, tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", tt.span, tt.n, got, tt.want)
		}
	}
}
