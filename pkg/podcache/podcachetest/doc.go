// Package podcachetest holds the test fixtures of the pod cache: a fully populated pod that
// exercises every field the compact pod keeps or drops. Only tests import it; it imports no
// podpilot package, so podcache's own tests can use it.
package podcachetest
