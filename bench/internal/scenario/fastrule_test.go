package scenario

import (
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

func TestBenchRulesAddTheFastRuleToTheDefaults(t *testing.T) {
	cfg, err := rules.Load([]byte(benchRules(15 * time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	def := rules.Default()
	if len(cfg.Rules) != len(def.Rules)+1 || len(cfg.ExternalRules) != len(def.ExternalRules) {
		t.Fatalf("rules %d, external %d; want %d and %d", len(cfg.Rules), len(cfg.ExternalRules), len(def.Rules)+1, len(def.ExternalRules))
	}
	if got, want := cfg.Rules[len(cfg.Rules)-1].MetricsQuery, "sum(irate(<<.Series>>{<<.LabelMatchers>>}[45s])) by (<<.GroupBy>>)"; got != want {
		t.Errorf("fast rule query = %s, want %s", got, want)
	}
}
