// Command podcache is the baseline of the bench's scenario g: the plainest
// cache of the cluster's pods a controller keeps, a client-go typed
// SharedInformerFactory with the pods informer of all namespaces and no
// transform, so every pod is cached whole (managedFields, annotations, the
// full spec and status). It waits for the cache to sync, prints
// "synced <n> pods" every --interval, and otherwise sleeps; the bench reads
// its RSS beside podpilot's. It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "podcache:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("podcache", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	interval := fs.Duration("interval", 5*time.Second, "how often to print the number of cached pods")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *interval <= 0 {
		return fmt.Errorf("--interval must be positive")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", *kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := informers.NewSharedInformerFactory(client, 0)
	pods := f.Core().V1().Pods().Informer()
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return fmt.Errorf("pod cache did not sync: %w", context.Cause(ctx))
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		fmt.Printf("synced %d pods\n", len(pods.GetStore().ListKeys()))
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
