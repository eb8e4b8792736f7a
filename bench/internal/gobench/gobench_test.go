package gobench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseReadsBenchmarkLinesUnderTheirPackage(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/podpilot/podpilot/pkg/provider/rules
cpu: AMD EPYC
BenchmarkQuery/100_pods-2         	  123456	      9876 ns/op	    1234 B/op	      12 allocs/op
BenchmarkBroken-2 not a number ns/op
PASS
ok  	github.com/podpilot/podpilot/pkg/provider/rules	2.1s
pkg: github.com/podpilot/podpilot/pkg/autoscaler/replicas
BenchmarkCalculate-2   	 1000	 1500000 ns/op	 5.5 pods/op	 0 B/op	 0 allocs/op
`
	want := []Result{
		{Package: "github.com/podpilot/podpilot/pkg/provider/rules", Name: "BenchmarkQuery/100_pods-2", Iterations: 123456,
			Values: map[string]float64{"ns/op": 9876, "B/op": 1234, "allocs/op": 12}},
		{Package: "github.com/podpilot/podpilot/pkg/autoscaler/replicas", Name: "BenchmarkCalculate-2", Iterations: 1000,
			Values: map[string]float64{"ns/op": 1.5e6, "pods/op": 5.5, "B/op": 0, "allocs/op": 0}},
	}
	if diff := cmp.Diff(want, Parse(out)); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestDiscoverFindsPackagesDeclaringBenchmarks(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a/a_test.go":         "package a\n\nfunc BenchmarkX(b *testing.B) {}\n",
		"b/b_test.go":         "package b\n\nfunc TestX(t *testing.T) {}\n",
		"c/d/d_test.go":       "package d\n\nfunc BenchmarkY(b *testing.B) {}\n",
		"c/d/notatest.go":     "package d\n\nfunc BenchmarkZ(b *testing.B) {}\n",
		"_output/x/x_test.go": "package x\n\nfunc BenchmarkW(b *testing.B) {}\n",
		"e/comment_test.go":   "package e\n\n// func BenchmarkV(b *testing.B) {}\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"./a", "./c/d"}, got); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}
}
