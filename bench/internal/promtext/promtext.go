package promtext

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are the metric families of one scrape, by name.
type Families map[string]*dto.MetricFamily

// Parse parses a text exposition.
func Parse(body []byte) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return fams, nil
}

// Sum adds the values of every sample of counter or gauge name whose labels
// include match (a histogram or summary contributes its sample count).
func (f Families) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, m := range f.metrics(name, match) {
		total += value(m)
	}
	return total
}

// SumBy is Sum grouped by the values of the labels by, joined with "/".
func (f Families) SumBy(name string, match map[string]string, by ...string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.metrics(name, match) {
		parts := make([]string, len(by))
		for i, l := range by {
			parts[i] = label(m, l)
		}
		out[strings.Join(parts, "/")] += value(m)
	}
	return out
}

// HistogramSum returns the summed sample sum and count of histogram name
// over its series whose labels include match.
func (f Families) HistogramSum(name string, match map[string]string) (sum, count float64) {
	for _, m := range f.metrics(name, match) {
		if h := m.GetHistogram(); h != nil {
			sum += h.GetSampleSum()
			count += float64(h.GetSampleCount())
		}
	}
	return sum, count
}

// HistogramMaxBound returns the upper bound of the highest bucket of
// histogram name (series whose labels include match) that gained observations
// between before and f: an upper bound of the largest observation in between.
// It is 0 when nothing was observed, +Inf when the largest fell past the last
// finite bucket.
func (f Families) HistogramMaxBound(before Families, name string, match map[string]string) float64 {
	return f.HistogramQuantileBound(before, name, match, 1)
}

// HistogramQuantileBound returns the upper bound of the lowest bucket of
// histogram name (series whose labels include match) holding the q-quantile
// of the observations made between before and f: an upper bound of that
// quantile, never an interpolation. It is 0 when nothing was observed, +Inf
// when the quantile fell past the last finite bucket.
func (f Families) HistogramQuantileBound(before Families, name string, match map[string]string, q float64) float64 {
	gained := func(fam Families) (buckets map[float64]float64, count float64) {
		buckets = map[float64]float64{}
		for _, m := range fam.metrics(name, match) {
			h := m.GetHistogram()
			if h == nil {
				continue
			}
			for _, b := range h.GetBucket() {
				buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
			count += float64(h.GetSampleCount())
		}
		return buckets, count
	}
	now, nowCount := gained(f)
	then, thenCount := gained(before)
	// Cumulative counts: the q-quantile lies in the lowest bucket whose gain
	// reaches q of the total gain.
	total := nowCount - thenCount
	if total <= 0 {
		return 0
	}
	bounds := make([]float64, 0, len(now))
	for b := range now {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	for _, b := range bounds {
		if now[b]-then[b] >= q*total {
			return b
		}
	}
	return math.Inf(1)
}

// Names returns the family names that start with prefix and end with suffix.
func (f Families) Names(prefix, suffix string) []string {
	var out []string
	for n := range f {
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	return out
}

func (f Families) metrics(name string, match map[string]string) []*dto.Metric {
	fam, ok := f[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		ok := true
		for k, v := range match {
			if label(m, k) != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.GetSummary() != nil:
		return float64(m.GetSummary().GetSampleCount())
	}
	return 0
}
