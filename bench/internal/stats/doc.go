// Package stats summarizes benchmark samples: percentiles, means and the
// ratios the bench report prints beside every absolute number.
package stats
