// Package gobench finds the repository's Go benchmarks, runs them with
// -benchmem and parses their results for the bench report.
package gobench
