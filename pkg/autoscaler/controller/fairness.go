package controller

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// fairShare caps how many PodAutoscalers of one namespace sync at once, so that a namespace whose
// rounds are slow (a slow metric, thousands of PodAutoscalers) leaves workers to the others: a
// worker that takes a PodAutoscaler of a namespace at its cap parks it, and the namespace's next
// sync to end takes it up. A namespace's PodAutoscalers then sync in queue order, at most limit
// at a time, and every other namespace keeps the remaining workers. It is safe for concurrent use.
type fairShare struct {
	limit int

	mu      sync.Mutex
	running map[string]int
	parked  map[string][]cache.ObjectName
}

func newFairShare(limit int) *fairShare {
	return &fairShare{limit: max(1, limit), running: map[string]int{}, parked: map[string][]cache.ObjectName{}}
}

// admit reports whether key may sync now. If not, it is parked: done hands it out once a sync of
// its namespace ends.
func (f *fairShare) admit(key cache.ObjectName) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[key.Namespace] >= f.limit {
		f.parked[key.Namespace] = append(f.parked[key.Namespace], key)
		return false
	}
	f.running[key.Namespace]++
	return true
}

// done ends the sync of key and returns a parked PodAutoscaler of its namespace to sync next,
// already admitted, if there is one.
func (f *fairShare) done(key cache.ObjectName) (cache.ObjectName, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := key.Namespace
	if parked := f.parked[ns]; len(parked) > 0 {
		next := parked[0]
		if len(parked) == 1 {
			delete(f.parked, ns)
		} else {
			f.parked[ns] = parked[1:]
		}
		return next, true
	}
	if f.running[ns]--; f.running[ns] <= 0 {
		delete(f.running, ns)
	}
	return cache.ObjectName{}, false
}
