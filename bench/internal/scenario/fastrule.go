package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// benchRules is podpilot's default rule file with docs/how-it-decides.md's fast-reacting rule
// added for the bench's counter: stepFastMetric is irate() of stepCounter over
// a window of three scrapes, so a step shows in full at the first scrape after
// it, where the default rule's rate() over 1m takes a minute to.
func benchRules(scrape time.Duration) string {
	fast := fmt.Sprintf(`# bench: docs/how-it-decides.md's fast-reacting rule, irate over three scrapes.
- seriesQuery: '%s{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name:
    matches: ^%s$
    as: %s
  metricsQuery: sum(irate(<<.Series>>{<<.LabelMatchers>>}[%s])) by (<<.GroupBy>>)
`, stepCounter, stepCounter, stepFastMetric, promDuration(3*scrape))
	return strings.Replace(rules.DefaultYAML, "externalRules:\n", fast+"externalRules:\n", 1)
}

// promDuration formats d as a PromQL duration in whole seconds.
func promDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
}
