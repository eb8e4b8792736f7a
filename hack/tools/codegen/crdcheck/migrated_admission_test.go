package crdcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// TestMigratedPodAutoscalersAreAdmitted admits every PodAutoscaler that `podpilot migrate`
// writes for the HPAs of pkg/autoscaler/hpaconv/testdata (its golden *.ppa.yaml, which
// hpaconv's TestConvertGolden keeps equal to what the conversion writes): a conversion never
// produces what the CRD rejects.
func TestMigratedPodAutoscalersAreAdmitted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "pkg", "autoscaler", "hpaconv", "testdata", "*.ppa.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no converted PodAutoscalers in pkg/autoscaler/hpaconv/testdata: %v", err)
	}
	a := newAdmitter(t)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			jsonData, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj map[string]any
			if err := utiljson.Unmarshal(jsonData, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			meta, _ := obj["metadata"].(map[string]any)
			t.Run(filepath.Base(f)+"/"+meta["name"].(string), func(t *testing.T) {
				if errs := a.admit(t, obj); len(errs) > 0 {
					t.Errorf("rejected:\n%v", errs.ToAggregate())
				}
			})
			n++
		}
	}
	if n < 4 {
		t.Errorf("admitted %d converted PodAutoscalers, want every one of testdata (at least 4)", n)
	}
}
