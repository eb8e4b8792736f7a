// Package svg renders the bench report's plots as small hand-written SVG
// documents (no dependencies): distributions as CDFs and figures against N
// as lines.
package svg
