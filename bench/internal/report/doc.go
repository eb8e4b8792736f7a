// Package report renders the bench's results as a Markdown report and as
// the plain-text table make bench prints.
package report
