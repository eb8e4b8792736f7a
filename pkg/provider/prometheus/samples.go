package prometheus

import (
	"github.com/prometheus/common/model"
)

// Sample is one sample of an instant query, reduced to the labels a caller asked for.
type Sample struct {
	// Labels holds the values of the asked-for labels, in the order asked; "" for a label the
	// sample does not have. Samples may share its backing array: do not append to it.
	Labels []string
	// Value is the sample value; NaN and ±Inf come through as such.
	Value float64
	// Timestamp is the sample time.
	Timestamp model.Time
}

// labelArena is how many label values labelSink allocates at once.
const labelArena = 512

// labelSink builds Samples holding only the asked-for labels. Label values equal to the previous
// sample's reuse its string, so a label shared by every sample (the namespace) is allocated once.
type labelSink struct {
	names []string
	out   []Sample
	arena []string
	cur   []string
	prev  []string
}

func newLabelSink(names []string) *labelSink {
	return &labelSink{names: names, prev: make([]string, len(names))}
}

func (k *labelSink) begin() {
	if len(k.names) == 0 {
		k.cur = nil
		return
	}
	if len(k.arena) < len(k.names) {
		k.arena = make([]string, max(labelArena, len(k.names)))
	}
	k.cur, k.arena = k.arena[:len(k.names):len(k.names)], k.arena[len(k.names):]
}

func (k *labelSink) label(name, value []byte) {
	for i, want := range k.names {
		if string(name) != want {
			continue
		}
		if k.prev[i] == string(value) {
			k.cur[i] = k.prev[i]
		} else {
			k.cur[i] = string(value)
			k.prev[i] = k.cur[i]
		}
		return
	}
}

func (k *labelSink) reset() { k.out = k.out[:0] }

func (k *labelSink) end(hasValue bool, v float64, ts model.Time) {
	if !hasValue {
		return
	}
	k.out = append(k.out, Sample{Labels: k.cur, Value: v, Timestamp: ts})
}

// vectorSink builds a model.Vector: every label kept, label names shared among samples and the
// samples allocated in one block.
type vectorSink struct {
	names   map[string]model.LabelName
	samples []model.Sample
	metric  model.Metric
}

func (k *vectorSink) begin() { k.metric = model.Metric{} }

func (k *vectorSink) label(name, value []byte) {
	ln, ok := k.names[string(name)]
	if !ok {
		if k.names == nil {
			k.names = map[string]model.LabelName{}
		}
		ln = model.LabelName(name)
		k.names[string(ln)] = ln
	}
	k.metric[ln] = model.LabelValue(value)
}

func (k *vectorSink) reset() { k.samples = k.samples[:0] }

func (k *vectorSink) end(hasValue bool, v float64, ts model.Time) {
	if !hasValue {
		return
	}
	k.samples = append(k.samples, model.Sample{Metric: k.metric, Value: model.SampleValue(v), Timestamp: ts})
}

// vector returns the samples as a model.Vector.
func (k *vectorSink) vector() model.Vector {
	vec := make(model.Vector, len(k.samples))
	for i := range k.samples {
		vec[i] = &k.samples[i]
	}
	return vec
}
