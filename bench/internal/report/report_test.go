package report

import (
	"strings"
	"testing"
)

func TestTableMarkdownEscapesPipesAndPadsShortRows(t *testing.T) {
	got := Table{Header: []string{"target", "req/s"}, Rows: [][]string{{"a|b", "1"}, {"short"}}}.Markdown()
	want := "| target | req/s |\n|---|---|\n| a\\|b | 1 |\n| short |  |\n"
	if got != want {
		t.Errorf("Markdown =\n%q\nwant\n%q", got, want)
	}
}

func TestTableTextAlignsColumnsByRuneWidth(t *testing.T) {
	got := Table{Header: []string{"x", "ratio"}, Rows: [][]string{{"longer", "1.0×"}}}.Text()
	want := "  x       ratio\n  longer  1.0×\n"
	if got != want {
		t.Errorf("Text =\n%q\nwant\n%q", got, want)
	}
}

func TestReportMarkdownHasMachineSettingsSectionsAndImages(t *testing.T) {
	r := Report{
		Title:    "podpilot bench",
		Summary:  []string{"Took 1m."},
		Machine:  []KV{{"CPU", "test cpu"}},
		Settings: []KV{{"sizes", "100"}},
		Sections: []Section{{
			Title: "a. API", Intro: "What it measures.", Headline: []string{"direct 2× the floor"},
			Tables: []Table{{Header: []string{"h"}, Rows: [][]string{{"v"}}}},
			Notes:  []string{"a note"}, Images: []Image{{Alt: "latency", File: "x-latency.svg"}},
		}},
	}
	md := r.Markdown()
	for _, want := range []string{"# podpilot bench\n", "Took 1m.", "## Machine", "| CPU | test cpu |", "## Settings", "| sizes | 100 |",
		"## Headline\n\n- direct 2× the floor\n\n## Machine", "## a. API\n\nWhat it measures.", "| h |", "- a note", "![latency](x-latency.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	txt := r.Text()
	for _, want := range []string{"  > direct 2× the floor", "== a. API", "  h", "  * a note"} {
		if !strings.Contains(txt, want) {
			t.Errorf("Text lacks %q:\n%s", want, txt)
		}
	}
}

func TestATableCaptionIsPrintedAboveItsTable(t *testing.T) {
	r := Report{Sections: []Section{{Title: "a", Tables: []Table{{Caption: "same request", Header: []string{"h"}, Rows: [][]string{{"v"}}}}}}}
	if md := r.Markdown(); !strings.Contains(md, "**same request**\n\n| h |") {
		t.Errorf("Markdown lacks the caption above the table:\n%s", md)
	}
	if txt := r.Text(); !strings.Contains(txt, "-- same request\n") {
		t.Errorf("Text lacks the caption:\n%s", txt)
	}
}
