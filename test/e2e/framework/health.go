package framework

import "context"

// APIServiceAvailable reports whether the APIService name is Available, and
// its Available condition's reason and message.
func (c *Cluster) APIServiceAvailable(ctx context.Context, name string) (bool, string, error) {
	return c.apiServiceAvailable(ctx, name)
}
