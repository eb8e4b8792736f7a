// Package procstat reads a process's CPU time and resident memory from
// /proc, for the bench's CPU-per-request and RSS figures.
package procstat
