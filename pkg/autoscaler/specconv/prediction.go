package specconv

import (
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/calendar"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// ForecastMode is spec.prediction.mode for the decision: "" when prediction is off.
func ForecastMode(p *podpilotv1alpha1.PredictionSpec) decision.ForecastMode {
	if p == nil {
		return ""
	}
	switch p.Mode {
	case podpilotv1alpha1.PredictionForecastOnly:
		return decision.ForecastOnly
	case podpilotv1alpha1.PredictionScaleOut:
		return decision.ForecastScaleOut
	}
	return ""
}

// HistoryWindow is the history the forecast fits: spec.prediction.historyDays, or its default.
func HistoryWindow(p *podpilotv1alpha1.PredictionSpec) time.Duration {
	days := int32(podpilotv1alpha1.DefaultHistoryDays)
	if p != nil && p.HistoryDays != nil {
		days = *p.HistoryDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// LeadTime is spec.prediction.leadTimeSeconds, or observed when unset.
func LeadTime(p *podpilotv1alpha1.PredictionSpec, observed time.Duration) time.Duration {
	if p != nil && p.LeadTimeSeconds != nil {
		return time.Duration(*p.LeadTimeSeconds) * time.Second
	}
	return observed
}

// Windows converts spec.schedules for the calendar.
func Windows(ws []podpilotv1alpha1.ScheduleWindow) []calendar.Window {
	out := make([]calendar.Window, 0, len(ws))
	for _, w := range ws {
		out = append(out, calendar.Window{Name: w.Name, Start: w.Start, TimeZone: w.TimeZone, Duration: w.Duration.Duration, MinReplicas: w.MinReplicas})
	}
	return out
}
