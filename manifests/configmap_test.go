package manifests_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// TestConfigMapHoldsDefaultRules keeps configmap.yaml's rule file equal to
// rules.DefaultYAML, the rules podpilot serves without --config, so that the
// shipped ConfigMap cannot drift from the documented and tested defaults.
func TestConfigMapHoldsDefaultRules(t *testing.T) {
	b, err := os.ReadFile("configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatalf("parse configmap.yaml: %v", err)
	}
	got, ok := cm.Data["rules.yaml"]
	if !ok {
		t.Fatalf("configmap.yaml has no data key rules.yaml; keys: %v", cm.Data)
	}
	if diff := cmp.Diff(rules.DefaultYAML, got); diff != "" {
		t.Errorf("configmap.yaml data.rules.yaml differs from rules.DefaultYAML (-DefaultYAML +configmap.yaml):\n%s\n"+
			"Replace data.rules.yaml with this block:\n  rules.yaml: |\n%s", diff, indent(rules.DefaultYAML, "    "))
	}
}

// indent prefixes every non-empty line of s with prefix, as a YAML block scalar needs.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
