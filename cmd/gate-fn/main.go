// Command gate-fn is the kubectl-gate KRM function: list it under a
// kustomization's validators: (kind: Gate) or transformers: (kind: Pin).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubectl-gate/kubectl-gate/fn"
	// The API server's validation of webhook configurations (api-validation).
	_ "github.com/kubectl-gate/kubectl-gate/internal/apivalidation/webhooks"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	supervise.Run("gate-fn", 3) // a crash Go cannot recover from is still no verdict
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := fn.Run(ctx, os.Stdin, os.Stdout, os.Stderr, version)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
