// Package forward serves, beside podpilot's own external metrics, those no podpilot rule serves
// by forwarding them to another external-metrics adapter (e.g. KEDA's metrics server), after
// authorizing the caller as the aggregator would have for that adapter.
package forward
