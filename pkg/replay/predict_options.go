package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

// PredictionOptions are the --prediction-* options: how a spec with spec.prediction is replayed
// reactive, predictive and oracle side by side.
type PredictionOptions struct {
	// Method is the forecasting model of the predictive run.
	Method string
	// Refresh is how often the model is refitted, as the controller does.
	Refresh time.Duration
	// HistoryStep is the resolution of the history the model fits.
	HistoryStep time.Duration
	// LeadTime overrides the lead time; 0 takes the spec's leadTimeSeconds, else --ready-delay
	// plus one --step.
	LeadTime time.Duration
}

// DefaultPredictionOptions returns the controller's defaults.
func DefaultPredictionOptions() PredictionOptions {
	p := DefaultPrediction()
	return PredictionOptions{Method: string(p.Method), Refresh: p.Refresh, HistoryStep: DefaultHistoryStep}
}

// DefaultHistoryStep is the resolution of the history the forecast fits.
const DefaultHistoryStep = time.Minute

// AddFlags adds the --prediction-* flags to fs.
func (o *PredictionOptions) AddFlags(fs *pflag.FlagSet) {
	names := make([]string, 0, 3)
	for _, m := range forecast.Methods() {
		names = append(names, string(m))
	}
	fs.StringVar(&o.Method, "prediction-method", o.Method, "Forecasting model of the predictive run: "+strings.Join(names, ", ")+".")
	fs.DurationVar(&o.Refresh, "prediction-refresh", o.Refresh, "How often the model is refitted on the history before that time.")
	fs.DurationVar(&o.HistoryStep, "prediction-history-step", o.HistoryStep, "Resolution of the history the model fits; it must divide a day.")
	fs.DurationVar(&o.LeadTime, "prediction-lead-time", o.LeadTime,
		"How far ahead the forecast looks; unset takes the spec's leadTimeSeconds, else --ready-delay plus one --step.")
}

// Validate returns every problem with the options.
func (o *PredictionOptions) Validate() []error {
	var errs []error
	if !slices.Contains(forecast.Methods(), forecast.Method(o.Method)) {
		errs = append(errs, fmt.Errorf("--prediction-method %q is none of %v", o.Method, forecast.Methods()))
	}
	if o.Refresh <= 0 || o.LeadTime < 0 {
		errs = append(errs, fmt.Errorf("--prediction-refresh must be positive and --prediction-lead-time not negative"))
	}
	if o.HistoryStep <= 0 || (24*time.Hour)%o.HistoryStep != 0 {
		errs = append(errs, fmt.Errorf("--prediction-history-step %s must divide a day", o.HistoryStep))
	}
	return errs
}

// prediction returns the replayed forecast's settings.
func (o *PredictionOptions) prediction() Prediction {
	return Prediction{Method: forecast.Method(o.Method), LeadTime: o.LeadTime, Refresh: o.Refresh}
}
