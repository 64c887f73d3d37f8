// Command gate-fn is the kubectl-gate KRM function: list it under a
// kustomization's validators: (kind: Gate) or transformers: (kind: Pin).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubectl-gate/kubectl-gate/fn"
	// Supervision starts from its package initializer, before the work's
	// packages are initialized: a crash Go cannot recover from is still no
	// verdict (exit 3).
	_ "github.com/kubectl-gate/kubectl-gate/cmd/gate-fn/supervised"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise/child"
	// The API server's validation of webhook configurations (api-validation).
	_ "github.com/kubectl-gate/kubectl-gate/internal/apivalidation/webhooks"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	child.Arm() // the supervised child's crash report and memory limit
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := fn.Run(ctx, os.Stdin, os.Stdout, os.Stderr, version)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
