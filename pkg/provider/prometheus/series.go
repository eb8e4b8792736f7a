package prometheus

import (
	"bytes"
	"slices"

	"github.com/prometheus/common/model"
)

// shapeSet keeps one label set per distinct series shape (metric name and set of label names
// with a non-empty value) of a /api/v1/series answer as it streams by, so that what is held
// grows with the distinct shapes, not with the series. The label values kept are those of the
// first series of each shape.
type shapeSet struct {
	seen  map[string]struct{}
	out   []model.LabelSet
	arena []byte      // the current series' names and values
	pairs []labelPair // the current series' labels, as offsets into arena
	key   []byte
}

// labelPair is one label of the series being read: arena[n0:n1] is its name, arena[n1:v1] its
// value.
type labelPair struct{ n0, n1, v1 int }

// data reads the value of "data" of a series answer: null or an array of series. Given twice,
// the last counts.
func (k *shapeSet) data(s *scanner) error {
	k.seen, k.out = nil, nil
	if null, err := s.isNull(); null || err != nil {
		return err
	}
	return s.array(func() error { return k.series(s) })
}

// series reads one series object and keeps it if its shape is new.
func (k *shapeSet) series(s *scanner) error {
	k.arena, k.pairs = k.arena[:0], k.pairs[:0]
	err := s.object(func(name []byte) error {
		n0 := len(k.arena)
		k.arena = append(k.arena, name...)
		n1 := len(k.arena)
		value, err := s.str()
		if err != nil {
			return err
		}
		k.arena = append(k.arena, value...)
		k.pairs = append(k.pairs, labelPair{n0: n0, n1: n1, v1: len(k.arena)})
		return nil
	})
	if err != nil {
		return err
	}
	k.add()
	return nil
}

// add keeps the series just read if it has a name and a new shape.
func (k *shapeSet) add() {
	a := k.arena
	// A label given twice counts with its last value, as encoding/json decodes it: sorted
	// stably, the last of a run of equal names is kept.
	slices.SortStableFunc(k.pairs, func(x, y labelPair) int { return bytes.Compare(a[x.n0:x.n1], a[y.n0:y.n1]) })
	kept := k.pairs[:0]
	for i, p := range k.pairs {
		if i+1 < len(k.pairs) && bytes.Equal(a[p.n0:p.n1], a[k.pairs[i+1].n0:k.pairs[i+1].n1]) {
			continue
		}
		kept = append(kept, p)
	}
	k.pairs = kept
	var name []byte
	k.key = k.key[:0]
	for _, p := range k.pairs {
		if string(a[p.n0:p.n1]) == model.MetricNameLabel {
			name = a[p.n1:p.v1]
		}
	}
	if len(name) == 0 {
		return
	}
	k.key = append(k.key, name...)
	for _, p := range k.pairs {
		if p.v1 > p.n1 && string(a[p.n0:p.n1]) != model.MetricNameLabel {
			k.key = append(append(k.key, 0), a[p.n0:p.n1]...)
		}
	}
	if _, dup := k.seen[string(k.key)]; dup {
		return
	}
	if k.seen == nil {
		k.seen = map[string]struct{}{}
	}
	k.seen[string(k.key)] = struct{}{}
	ls := make(model.LabelSet, len(k.pairs))
	for _, p := range k.pairs {
		if p.v1 > p.n1 {
			ls[model.LabelName(a[p.n0:p.n1])] = model.LabelValue(a[p.n1:p.v1])
		}
	}
	k.out = append(k.out, ls)
}
