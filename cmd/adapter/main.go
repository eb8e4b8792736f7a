// Command podpilot serves Kubernetes custom and external metrics from
// Prometheus and runs the embedded PodAutoscaler controller.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/podpilot/podpilot/cmd/adapter/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
