// Command kubectl-gate is the kubectl plugin: `kubectl gate check|pin|status|selftest`.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/term"

	// Supervision starts from its package initializer, before the work's
	// packages are initialized: a crash Go cannot recover from is still no
	// verdict (exit 3).
	_ "github.com/kubectl-gate/kubectl-gate/cmd/kubectl-gate/supervised"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise/child"
	// The API server's validation of webhook configurations (api-validation).
	_ "github.com/kubectl-gate/kubectl-gate/internal/apivalidation/webhooks"
	"github.com/kubectl-gate/kubectl-gate/plugin"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	child.Arm() // the supervised child's crash report and memory limit
	// SIGINT and SIGTERM end the run: plugin.Run returns exit 3 within a
	// moment, naming what was running (README "Exit codes"). A second
	// signal exits at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(&plugin.SignalError{Signal: sig})
		<-sigs
		os.Exit(plugin.ExitNoVerdict)
	}()
	s := plugin.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutIsTTY: term.IsTerminal(int(os.Stdout.Fd())), ErrIsTTY: term.IsTerminal(int(os.Stderr.Fd()))}
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "helm" { // kustomize --helm-command (README "Helm charts")
		args = append([]string{"helm"}, args...)
	}
	stopProfiles := startProfiles()
	code := plugin.Run(ctx, args, s, version)
	stopProfiles()
	os.Exit(code)
}
