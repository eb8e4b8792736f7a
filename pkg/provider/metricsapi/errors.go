package metricsapi

import (
	"github.com/podpilot/podpilot/pkg/provider/apistatus"
)

// statusError turns err into an API status; see apistatus.FromError. errCacheNotSynced and
// errDiscoveryIncomplete are 503s.
func statusError(what string, err error) error {
	return apistatus.FromError(what, err, errCacheNotSynced, errDiscoveryIncomplete)
}
