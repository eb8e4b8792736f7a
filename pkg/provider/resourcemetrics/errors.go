package resourcemetrics

import (
	"errors"

	"github.com/podpilot/podpilot/pkg/provider/apistatus"
)

// errNoResourceRules means the rules in force have no resourceRules (a reload removed them).
var errNoResourceRules = errors.New("the rule file in force has no resourceRules")

// statusError turns err into an API status; see apistatus.FromError. errNoResourceRules is a 503.
func statusError(what string, err error) error {
	return apistatus.FromError(what, err, errNoResourceRules)
}
