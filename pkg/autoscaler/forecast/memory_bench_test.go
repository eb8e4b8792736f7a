package forecast

import (
	"runtime"
	"testing"
)

// retainedBytes returns the heap bytes that n values made by build keep alive, per value.
func retainedBytes(n int, build func() any) float64 {
	kept := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i] = build()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkModelMemory is the heap a fitted model keeps alive, on four weeks at one-minute
// resolution: the Model as it is (its fitted state and profiles), against what the predict
// closure of the old representation kept (the whole decomposition of the history, the history
// with it, and the state).
func BenchmarkModelMemory(b *testing.B) {
	const models = 8
	s := benchSeries()
	b.Run("Model", func(b *testing.B) {
		var per float64
		for b.Loop() {
			per = retainedBytes(models, func() any {
				m, err := Fit(Series{Start: s.Start, Step: s.Step, Values: append([]float64(nil), s.Values...)}, HoltWinters)
				if err != nil {
					b.Fatal(err)
				}
				return m
			})
		}
		b.ReportMetric(per, "bytes/model")
	})
	b.Run("decomposition-closure", func(b *testing.B) {
		var per float64
		for b.Loop() {
			per = retainedBytes(models, func() any {
				d := decompose(Series{Start: s.Start, Step: s.Step, Values: append([]float64(nil), s.Values...)}, DefaultSmoothing)
				var m Model
				if err := m.setHoltWinters(d); err != nil {
					b.Fatal(err)
				}
				return func() (decomposition, []float64, []float64) { return d, m.daily, m.weekly }
			})
		}
		b.ReportMetric(per, "bytes/model")
	})
}
