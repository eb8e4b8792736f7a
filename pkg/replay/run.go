package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	commoncfg "github.com/prometheus/common/config"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// Run replays every -f spec over the window the options give, writes each spec's table and chart
// into --out and the summaries, side by side, to stdout.
func Run(ctx context.Context, o *Options, c clock.PassiveClock, stdout io.Writer) error {
	if errs := o.Validate(); len(errs) > 0 {
		return fmt.Errorf("invalid flags: %w", utilerrors.NewAggregate(errs))
	}
	s, err := o.NewSession(c, nil)
	if err != nil {
		return err
	}
	w, model, requests := s.Window, s.Model, s.Model.Requests
	var summaries []Summary
	names := map[string]int{}
	for _, f := range o.Files {
		spec, err := LoadSpec(f)
		if err != nil {
			return err
		}
		if err := CheckRequests(spec, &requests); err != nil {
			return fmt.Errorf("replay %s: %w", f, err)
		}
		if names[spec.Name]++; names[spec.Name] > 1 {
			spec.Name = fmt.Sprintf("%s-%d", spec.Name, names[spec.Name])
		}
		ns := o.Namespace
		if ns == "" {
			ns = spec.PodAutoscaler.Namespace
		}
		if ns == "" {
			return fmt.Errorf("replay %s: no namespace: set --namespace or the PodAutoscaler's metadata.namespace", f)
		}
		r := &Reader{Source: s.Source, Rules: s.Rules, Namespace: ns, PodName: s.PodName, Memo: s.Memo} // the specs share the queries they ask alike
		ss, err := o.replaySpec(ctx, r, spec, w, model, &requests)
		if err != nil {
			return fmt.Errorf("replay %s: %w", f, err)
		}
		summaries = append(summaries, ss...)
	}
	fmt.Fprintf(stdout, "replay of %s to %s, one decision every %s\n\n", w.From.UTC().Format("2006-01-02T15:04:05Z"),
		w.To.UTC().Format("2006-01-02T15:04:05Z"), w.Step)
	return WriteSummaries(stdout, summaries, w.Step)
}

// replaySpec replays one spec and writes its files: a spec with spec.prediction is compared
// reactive, predictive and oracle, on the history its forecast fits.
func (o *Options) replaySpec(ctx context.Context, r *Reader, spec Spec, w Window, model Model, requests *Requests) ([]Summary, error) {
	tr, err := r.Trace(ctx, spec, w)
	if err != nil {
		return nil, err
	}
	if !spec.Predicts() {
		steps := Simulate(spec, tr, model)
		if err := o.writeFiles(ctx, spec, steps, requests); err != nil {
			return nil, err
		}
		return []Summary{Summarize(spec, steps, w.Step, requests)}, nil
	}
	history, err := r.History(ctx, spec, w, specconv.HistoryWindow(spec.PodAutoscaler.Spec.Prediction), o.Prediction.HistoryStep)
	if err != nil {
		return nil, err
	}
	c, err := Compare(spec, tr, history, model, o.Prediction.prediction())
	if err != nil {
		return nil, err
	}
	own := c.Steps[Predictive]
	if specconv.ForecastMode(spec.PodAutoscaler.Spec.Prediction) == decision.ForecastOnly {
		own = c.Steps[Reactive] // ForecastOnly writes nothing to the scale
	}
	if err := o.writeFiles(ctx, spec, own, requests); err != nil {
		return nil, err
	}
	if err := o.writeComparison(ctx, c, requests); err != nil {
		return nil, err
	}
	return c.Summaries(w.Step, requests), nil
}

// source connects to Prometheus with the --prometheus-* options.
func (o *Options) source() (Source, error) {
	cfg, err := o.Prometheus.Config()
	if err != nil {
		return nil, err
	}
	hc, err := commoncfg.NewClientFromConfig(cfg.HTTP, "podpilot-replay")
	if err != nil {
		return nil, fmt.Errorf("prometheus http client: %w", err)
	}
	hc.Timeout = cfg.Timeout
	client, err := api.NewClient(api.Config{Address: cfg.Address, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %s: %w", cfg.Address, err)
	}
	return promv1.NewAPI(client), nil
}

// writeFiles writes spec's table and chart into --out, if set.
func (o *Options) writeFiles(ctx context.Context, spec Spec, steps []Step, requests *Requests) error {
	if o.Out == "" {
		return nil
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("create --out directory: %w", err)
	}
	table, chart := filepath.Join(o.Out, spec.Name+".csv"), filepath.Join(o.Out, spec.Name+".svg")
	if err := writeFile(table, func(w io.Writer) error { return WriteCSV(w, spec, steps, requests) }); err != nil {
		return err
	}
	if err := writeFile(chart, func(w io.Writer) error { return WriteSVG(w, spec, steps, requests) }); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Wrote the replay", "spec", spec.Name, "table", table, "chart", chart)
	return nil
}

// writeComparison writes c's table and chart into --out, if set.
func (o *Options) writeComparison(ctx context.Context, c Comparison, requests *Requests) error {
	if o.Out == "" {
		return nil
	}
	table, chart := filepath.Join(o.Out, c.Spec.Name+"-comparison.csv"), filepath.Join(o.Out, c.Spec.Name+"-comparison.svg")
	if err := writeFile(table, func(w io.Writer) error { return WriteComparisonCSV(w, c, requests) }); err != nil {
		return err
	}
	if err := writeFile(chart, func(w io.Writer) error { return WriteComparisonSVG(w, c, requests) }); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Wrote the comparison", "spec", c.Spec.Name, "table", table, "chart", chart)
	return nil
}

// writeFile creates path and fills it with write.
func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	return write(f)
}
