// Command pause is the real node's pod sandbox image: it holds the pod's
// namespaces, reaps the children re-parented to it, and exits 0 on SIGTERM
// or SIGINT. `make images` packs it like podpilot's own image.
package main
