package manifests_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// TestChartFilesEqualTheirSources keeps the files the Helm chart ships equal
// to their one source: the default rules, the generated CRD (copied by
// hack/update-codegen.sh) and the dashboard.
func TestChartFilesEqualTheirSources(t *testing.T) {
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const chart = "../charts/podpilot/files/"
	pairs := map[string]string{
		chart + "dashboards/podpilot.json": read("dashboards/podpilot.json"),
		chart + "rules.yaml":               rules.DefaultYAML,
	}
	crds, err := filepath.Glob("crd/*_*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in manifests/crd: %v", err)
	}
	for _, crd := range crds {
		pairs[chart+"crds/"+filepath.Base(crd)] = read(crd)
	}
	for path, want := range pairs {
		if diff := cmp.Diff(want, read(path)); diff != "" {
			t.Errorf("%s differs from its source; copy the source over it (-source +chart):\n%s", path, diff)
		}
	}
}

// grafanaDashboard is the part of a Grafana dashboard the tests read.
type grafanaDashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// TestDashboardPanelsQueryTheSelectedDataSource checks the dashboard's shape:
// unique panel ids, and every graph queries the ${datasource} variable with a
// non-empty expression. test/e2e checks the expressions against a real
// Prometheus and podpilot's /metrics.
func TestDashboardPanelsQueryTheSelectedDataSource(t *testing.T) {
	b, err := os.ReadFile("dashboards/podpilot.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboards/podpilot.json: %v", err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard has uid %q and %d panels", d.UID, len(d.Panels))
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		if other, ok := ids[p.ID]; ok {
			t.Errorf("panels %q and %q share id %d", p.Title, other, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %q, %d targets", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for i, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q target %d has no expression", p.Title, i)
			}
		}
	}
}
