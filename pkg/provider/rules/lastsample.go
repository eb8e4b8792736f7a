package rules

import (
	"fmt"
	"text/template"
)

// lastSampleQuery asks for the time of the newest raw sample among a request's series. Raw
// samples carry their scrape's timestamp, whatever the rule's metricsQuery computes from them,
// so the answer tells when the data behind the rule last changed.
const lastSampleQuery = `max(timestamp(<<.Series>>{<<.LabelMatchers>>}))`

// lastSampleQuery parses lastSampleQuery, with the rule's size limit. It is an aggregate over
// every object requested by design, so requests for every object need no separability check.
func (r *Rule) lastSampleQuery() (*compiledQuery, error) {
	tmpl, err := template.New("last-sample").Delims("<<", ">>").Parse(lastSampleQuery)
	if err != nil {
		return nil, fmt.Errorf("parse last-sample template: %w", err)
	}
	return &compiledQuery{tmpl: tmpl, maxBytes: r.query.maxBytes}, nil
}

// LastSampleQuery renders the PromQL for the time (in seconds since the epoch) of the newest raw
// sample of req's series, matched as Query matches them. The autoscaler uses it to evaluate right
// after a scrape lands; it costs one small query per namespace and metric.
func (r *Rule) LastSampleQuery(req ObjectRequest) (string, error) {
	if err := checkSeriesName(req.Series); err != nil {
		return "", err
	}
	c, err := r.lastSampleQuery()
	if err != nil {
		return "", err
	}
	q, err := objectQuery(c, r.resources, req)
	if err != nil {
		return "", fmt.Errorf("last sample: %w", err)
	}
	return q, nil
}

// ExternalLastSampleQuery is LastSampleQuery for an external rule: the newest raw sample of req's
// series, matched as ExternalQuery matches them.
func (r *Rule) ExternalLastSampleQuery(req ExternalRequest) (string, error) {
	c, err := r.lastSampleQuery()
	if err != nil {
		return "", err
	}
	q, err := r.externalQuery(c, req)
	if err != nil {
		return "", fmt.Errorf("last sample: %w", err)
	}
	return q, nil
}
