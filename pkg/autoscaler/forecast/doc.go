// Package forecast fits a workload's load history (daily and weekly seasonality, level and trend)
// and forecasts it a lead time ahead, or says why it will not. Pure: history and times come in.
// It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package forecast
