package podcache

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Lister reads cached pods from a pod informer's indexer.
type Lister struct {
	indexer cache.Indexer
}

// NewLister returns the Lister of indexer, a pod informer's.
func NewLister(indexer cache.Indexer) Lister { return Lister{indexer: indexer} }

// List returns the pods of namespace that selector selects.
func (l Lister) List(namespace string, selector labels.Selector) ([]*Pod, error) {
	return l.ByIndex(cache.NamespaceIndex, namespace, selector)
}

// ByIndex returns the pods under key in the index named index that selector selects.
func (l Lister) ByIndex(index, key string, selector labels.Selector) ([]*Pod, error) {
	objs, err := l.indexer.ByIndex(index, key)
	if err != nil {
		return nil, fmt.Errorf("look up pods by %s %q: %w", index, key, err)
	}
	out := make([]*Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := Of(o); ok && selector.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}
