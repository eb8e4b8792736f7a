package autoscalertest

import (
	"context"
	"math"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
)

// History serves a history from a load function of time; Err fails every read. It records the
// requests. Gate, when set, holds every read until it is closed.
type History struct {
	mu   sync.Mutex
	Load func(time.Time) float64
	Err  error
	reqs []metrics.HistoryRequest
	Gate chan struct{}
}

// Read answers req from Load, one value per step.
func (h *History) Read(req metrics.HistoryRequest) ([]float64, error) {
	h.mu.Lock()
	h.reqs = append(h.reqs, req)
	gate := h.Gate
	h.mu.Unlock()
	if gate != nil {
		<-gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.Err != nil {
		return nil, h.Err
	}
	var out []float64
	for t := req.Start; !t.After(req.End); t = t.Add(req.Step) {
		out = append(out, h.Load(t.Add(-req.Step/2))) // the value at t is the load around t - step/2
	}
	return out, nil
}

// ObjectsHistory answers as Read.
func (h *History) ObjectsHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.Read(req)
}

// ExternalHistory answers as Read.
func (h *History) ExternalHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.Read(req)
}

// SetGate holds every later read until gate is closed (nil: none).
func (h *History) SetGate(gate chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Gate = gate
}

// SetErr fails every later read with err (nil: none).
func (h *History) SetErr(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Err = err
}

// ResourceHistory answers as Read.
func (h *History) ResourceHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.Read(req)
}

// Requests returns the requests read so far.
func (h *History) Requests() []metrics.HistoryRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]metrics.HistoryRequest(nil), h.reqs...)
}

// EveningRush is a daily load in qps over the seed's pods: 1000 until 21:02 UTC (Now is 21:00),
// rising to 9000 by 21:07 and back to 1000 at 23:00, with a little noise.
func EveningRush(t time.Time) float64 {
	h := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	v := 1000.0
	switch {
	case h >= 21+2.0/60 && h < 21+7.0/60:
		v += 8000 * (h - 21 - 2.0/60) / (5.0 / 60)
	case h >= 21+7.0/60 && h < 23:
		v = 9000
	}
	return v * (1 + 0.01*math.Sin(float64(t.Unix()/60)*1.7))
}

// Predicting sets spec.prediction with a 10-minute lead time: at 21:10 the rush is at 9000.
func Predicting(mode podpilotv1alpha1.PredictionMode) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.Prediction = &podpilotv1alpha1.PredictionSpec{Mode: mode, HistoryDays: ptr.To[int32](3), LeadTimeSeconds: ptr.To[int32](600)}
	}
}
