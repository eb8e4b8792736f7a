package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// KV is one labelled value of the machine or the settings.
type KV struct{ Key, Value string }

// Table is a table of preformatted cells.
type Table struct {
	// Caption, when set, is printed in bold above the table.
	Caption string
	Header  []string
	Rows    [][]string
}

// Image is a plot next to the report.
type Image struct{ Alt, File string }

// Section is one scenario's results.
type Section struct {
	Title string
	// Headline are the section's main ratios, listed at the top of the report.
	Headline []string
	// Intro says what was measured and how; Notes follow the tables.
	Intro  string
	Tables []Table
	Images []Image
	Notes  []string
}

// Report is a whole bench run.
type Report struct {
	Title    string
	Summary  []string
	Machine  []KV
	Settings []KV
	Sections []Section
}

// Markdown renders the report as Markdown, with images linked relative to it.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	for _, s := range r.Summary {
		fmt.Fprintf(&b, "%s\n", s)
	}
	if len(r.Summary) > 0 {
		b.WriteString("\n")
	}
	var heads []string
	for _, sec := range r.Sections {
		heads = append(heads, sec.Headline...)
	}
	if len(heads) > 0 {
		b.WriteString("## Headline\n\n")
		for _, h := range heads {
			fmt.Fprintf(&b, "- %s\n", h)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Machine\n\n")
	b.WriteString(kvTable(r.Machine).Markdown())
	b.WriteString("\n## Settings\n\n")
	b.WriteString(kvTable(r.Settings).Markdown())
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Title)
		if s.Intro != "" {
			fmt.Fprintf(&b, "%s\n\n", s.Intro)
		}
		for _, t := range s.Tables {
			if t.Caption != "" {
				fmt.Fprintf(&b, "**%s**\n\n", t.Caption)
			}
			b.WriteString(t.Markdown())
			b.WriteString("\n")
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		if len(s.Notes) > 0 {
			b.WriteString("\n")
		}
		for _, img := range s.Images {
			fmt.Fprintf(&b, "![%s](%s)\n\n", img.Alt, img.File)
		}
	}
	return b.String()
}

// Text renders the report's tables and notes as aligned plain text.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Title)
	for _, s := range r.Sections {
		for _, h := range s.Headline {
			fmt.Fprintf(&b, "  > %s\n", h)
		}
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n== %s\n", s.Title)
		for _, t := range s.Tables {
			if t.Caption != "" {
				fmt.Fprintf(&b, "-- %s\n", t.Caption)
			}
			b.WriteString(t.Text())
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  * %s\n", n)
		}
	}
	return b.String()
}

func kvTable(kvs []KV) Table {
	t := Table{Header: []string{"", ""}}
	for _, kv := range kvs {
		t.Rows = append(t.Rows, []string{kv.Key, kv.Value})
	}
	return t
}

// Markdown renders t as a Markdown table; "|" in cells is escaped.
func (t Table) Markdown() string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for i := range t.Header {
			cell := ""
			if i < len(cells) {
				cell = strings.ReplaceAll(cells[i], "|", `\|`)
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for range t.Header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// Text renders t with columns padded to their widest cell.
func (t Table) Text() string {
	widths := make([]int, len(t.Header))
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for i := range widths {
			if i < len(r) {
				widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var parts []string
		for i, w := range widths {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			parts = append(parts, cell+strings.Repeat(" ", w-utf8.RuneCountInString(cell)))
		}
		fmt.Fprintf(&b, "  %s\n", strings.TrimRight(strings.Join(parts, "  "), " "))
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}
