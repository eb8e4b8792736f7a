package metricsapi

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErrors []string
	}{
		{name: "the defaults are valid"},
		{
			name: "prometheus-adapter's flag names are accepted",
			args: []string{"--config=" + rulesFile(t, gaugeRules), "--metrics-relist-interval=30s", "--metrics-max-age=5m"},
		},
		{
			name:       "every invalid option is reported",
			args:       []string{"--config=/does/not/exist", "--metrics-relist-interval=0s", "--metrics-max-age=-1s"},
			wantErrors: []string{"--metrics-relist-interval must be positive", "--metrics-max-age must be positive", "--config"},
		},
		{
			name:       "the rule file must be a file",
			args:       []string{"--config=" + t.TempDir()},
			wantErrors: []string{"is a directory"},
		},
		{
			name: "a query limit of 4 KiB is accepted: longer name lists are split",
			args: []string{"--metrics-max-query-bytes=4096"},
		},
		{
			name:       "a query limit under 4 KiB leaves no room for a rule's query",
			args:       []string{"--metrics-max-query-bytes=4095"},
			wantErrors: []string{"--metrics-max-query-bytes must be at least 4096"},
		},
		{
			name:       "a max age shorter than the relist interval misses series",
			args:       []string{"--metrics-relist-interval=5m", "--metrics-max-age=1m"},
			wantErrors: []string{"must be at least --metrics-relist-interval"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate()
			if len(errs) != len(tt.wantErrors) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.wantErrors))
			}
			for i, want := range tt.wantErrors {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], want)
				}
			}
		})
	}
	if o := NewOptions(); o.DiscoveryInterval != time.Minute || o.SeriesMaxAge != 10*time.Minute || o.RulesFile != "" ||
		o.MaxQueryBytes != 15<<10 || o.MaxQueryBytes >= victoriaMetricsMaxQueryLen {
		t.Errorf("defaults = %+v", o)
	}
}
