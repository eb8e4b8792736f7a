// Package tracegen generates synthetic load traces with daily and weekly seasonality, a trend,
// noise, holidays, unforecastable spikes and ramps faster than pod start-up, deterministically from
// a seed, for replaying predictive scaling with and without Prometheus.
package tracegen
