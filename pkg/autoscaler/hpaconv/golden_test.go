package hpaconv

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// TestConvertGolden converts each testdata/*.hpa.yaml and compares the PodAutoscalers with
// <name>.ppa.yaml and the refusals with <name>.refused.txt (run with -update to rewrite them).
// hack/tools/codegen/crdcheck admits every *.ppa.yaml against the generated CRD, so each
// conversion here is also checked to pass the PodAutoscaler's admission.
func TestConvertGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.hpa.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata/*.hpa.yaml: %v", err)
	}
	for _, in := range inputs {
		base := strings.TrimSuffix(in, ".hpa.yaml")
		t.Run(filepath.Base(base), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			hpas, err := Decode(in, data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var ppas, refused bytes.Buffer
			for _, h := range hpas {
				pa, err := Convert(h, ptr(UpstreamDefaults()))
				if err != nil {
					if !errors.Is(err, ErrRefused) {
						t.Fatalf("Convert: %v", err)
					}
					refused.WriteString(err.Error() + "\n")
					continue
				}
				out, err := YAML(pa)
				if err != nil {
					t.Fatal(err)
				}
				ppas.WriteString("---\n")
				ppas.Write(out)
			}
			checkGolden(t, base+".ppa.yaml", ppas.Bytes())
			checkGolden(t, base+".refused.txt", refused.Bytes())
		})
	}
}

// checkGolden compares got with the file at path, empty when the file does not exist.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if len(got) == 0 {
			_ = os.Remove(path)
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run go test ./pkg/autoscaler/hpaconv -update (-file +got):\n%s", path, diff)
	}
}
