// Package hack holds the tests of the scripts in hack/: the installers run
// against stubs that play a fresh Debian machine, and lib.sh's take_ports
// against a stubbed ss (see installers_test.go).
// The scripts themselves are bash; nothing here is imported.
package hack
