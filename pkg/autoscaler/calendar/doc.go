// Package calendar turns schedule windows (a cron start in a time zone, a duration, a minReplicas)
// into the floor that holds at a given time, and the windows active and next. Pure: the time comes in.
// It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package calendar
