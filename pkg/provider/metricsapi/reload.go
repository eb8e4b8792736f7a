package metricsapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// rulesPollInterval is how often the rule file is re-read to detect changes. The file is
// compared by content hash, not watched: os.ReadFile follows symlinks, so a ConfigMap volume's
// atomic "..data" symlink swap is seen like an in-place edit or a rename, with no watch to re-arm.
const rulesPollInterval = 5 * time.Second

// ruleSource reads and compiles the rule file (or the default rules when path is empty). It is
// used by one goroutine at a time (New, then the Run loop).
type ruleSource struct {
	path   string
	mapper rules.ResourceMapper
	limits rules.Limits
	// prom is the default backend's client; factory builds the others.
	prom    prometheus.Client
	factory BackendFactory
	// seen is the hash of the content last read, good or bad, so that an unchanged file is
	// neither recompiled nor reported again.
	seen [sha256.Size]byte
	// readErr is the last read error reported, so that a missing file is reported once.
	readErr string
}

// loadResult is what a load found.
type loadResult struct {
	// set is the compiled rule set; nil when the file is unchanged or bad.
	set *rules.RuleSet
	// backends are set's backends, default included.
	backends backends
	// unchanged is true when the content is the one last read (and force was not set).
	unchanged bool
}

// load reads and compiles the rules. Unless force is set, content identical to the last read
// is reported as unchanged without being compiled again.
func (s *ruleSource) load(force bool) (loadResult, error) {
	if s.path == "" {
		if !force {
			return loadResult{unchanged: true}, nil
		}
		set, err := rules.Compile(rules.Default(), s.mapper, s.limits)
		if err != nil {
			return loadResult{}, fmt.Errorf("compile default rules: %w", err)
		}
		return s.withBackends(set, "default rules")
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		if !force && err.Error() == s.readErr {
			return loadResult{unchanged: true}, nil
		}
		s.readErr = err.Error()
		return loadResult{}, fmt.Errorf("read rule file: %w", err)
	}
	s.readErr = ""
	sum := sha256.Sum256(data)
	if !force && sum == s.seen {
		return loadResult{unchanged: true}, nil
	}
	s.seen = sum
	cfg, err := rules.Load(data)
	if err != nil {
		return loadResult{}, fmt.Errorf("load rule file %s: %w", s.path, err)
	}
	set, err := rules.Compile(cfg, s.mapper, s.limits)
	if err != nil {
		return loadResult{}, fmt.Errorf("compile rule file %s: %w", s.path, err)
	}
	return s.withBackends(set, "rule file "+s.path)
}

// withBackends builds the backends of set: a backend that cannot be built (a header file that
// cannot be read) makes the whole rule file bad.
func (s *ruleSource) withBackends(set *rules.RuleSet, what string) (loadResult, error) {
	b, err := buildBackends(s.prom, set, s.factory)
	if err != nil {
		return loadResult{}, fmt.Errorf("%s: %w", what, err)
	}
	return loadResult{set: set, backends: b}, nil
}

// reload re-reads the rule file and, when it holds new good rules, installs them for the next
// discovery pass and reports true. A bad file is logged with every field error and counted; the
// last good rules stay in force.
func (p *Provider) reload(ctx context.Context, trigger string) bool {
	logger := klog.FromContext(ctx)
	res, err := p.source.load(trigger == reloadOnSignal)
	if err != nil {
		p.metrics.reloads.WithLabelValues(trigger, resultFailure).Inc()
		logger.Error(err, "Rule file rejected; keeping the last good rules", "file", p.source.path,
			"trigger", trigger, "fieldErrors", fieldErrors(err))
		return false
	}
	if res.unchanged || res.set == nil {
		return false
	}
	p.rules, p.backends = res.set, res.backends
	p.storeResource(res)
	p.metrics.reloads.WithLabelValues(trigger, resultSuccess).Inc()
	logger.Info("Loaded new rules", "file", p.source.path, "trigger", trigger,
		"customRules", len(res.set.Custom), "externalRules", len(res.set.External))
	return true
}

// fieldErrors lists the individual errors of an aggregate (the rule file's field errors).
func fieldErrors(err error) []string {
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return nil
	}
	out := make([]string, 0, len(agg.Errors()))
	for _, e := range agg.Errors() {
		out = append(out, e.Error())
	}
	return out
}
