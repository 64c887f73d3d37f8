// Command kubectl-gate is the kubectl plugin: `kubectl gate check|pin|status|selftest`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/kubectl-gate/kubectl-gate/plugin"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	s := plugin.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutIsTTY: term.IsTerminal(int(os.Stdout.Fd())), ErrIsTTY: term.IsTerminal(int(os.Stderr.Fd()))}
	code := plugin.Run(ctx, os.Args[1:], s, version)
	stop()
	os.Exit(code)
}
