package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// Exit codes (README "Exit codes").
const (
	ExitPass      = 0
	ExitViolation = 1
	ExitUsage     = 2
	ExitNoVerdict = 3 // supervise.NoVerdict
)

// Streams are the process's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	// ErrIsTTY turns on progress and color on stderr; OutIsTTY color on stdout.
	ErrIsTTY, OutIsTTY bool
	// reportErr is stderr without the line filter Run puts on Err: pin
	// writes its report there, whose workflow commands are the gate's own.
	reportErr io.Writer
}

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, s Streams) int
}

// Run runs the plugin with args (without the program name) and returns the
// exit code. A crash of the command is exit 3 with a one-line report;
// --debug adds the stack. When ctx ends (a signal: cancel it with a
// *SignalError cause) or check/pin's --timeout passes, Run returns exit 3
// at once, naming what was still running (stop.go).
func Run(ctx context.Context, args []string, s Streams, version string) (code int) {
	args, withStack := takeDebug(args)
	defer func() {
		var pe *PanicError
		if errors.As(stop.Recovered(recover()), &pe) {
			code = crashReport(s, pe, withStack)
		}
	}()
	if !s.ErrIsTTY {
		// Whatever reaches stderr in CI — an error quoting a manifest, the
		// stop line naming an Application — is shown escaped, and cannot
		// become a workflow command (issue 18; report.SafeLines).
		safe := report.SafeLines(s.Err)
		defer safe.Flush()
		s.reportErr, s.Err = s.Err, safe
	}
	cmds := commands(version)
	switch {
	case len(args) == 0:
		usage(s.Err, cmds)
		return ExitUsage
	case args[0] == "--version":
		fmt.Fprintln(s.Out, version)
		return ExitPass
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1:
		usage(s.Out, cmds)
		return ExitPass
	case args[0] == "help":
		// help COMMAND is COMMAND --help.
		if _, ok := cmds[args[1]]; !ok {
			fmt.Fprintf(s.Err, "kubectl gate: unknown command %q%s\n", args[1], suggest(args[1], commandNames()))
			return ExitUsage
		}
		args = []string{args[1], "--help"}
	}
	if args[0] == "__complete" { // hidden: shell and kubectl plugin completion (complete.go)
		return runComplete(args[1:], s.Out)
	}
	if args[0] == "helm" { // hidden: the gate as kustomize's helm command (helm.go)
		return runHelm(ctx, args[1:], s)
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(s.Err, "kubectl gate: unknown command %q%s\nRun 'kubectl gate --help' for the commands.\n", args[0], suggest(args[0], commandNames()))
		return ExitUsage
	}
	return runStoppable(ctx, s, withStack, func(ctx context.Context, s Streams) int { return c.run(ctx, args[1:], s) })
}

func commands(version string) map[string]command {
	return map[string]command{
		"check": {"static checks on the render; the exit code is the verdict",
			func(ctx context.Context, a []string, s Streams) int { return runCheck(ctx, a, s, version, false) }},
		"pin": {"resolve tags to digests; print the pinned render",
			func(ctx context.Context, a []string, s Streams) int { return runCheck(ctx, a, s, version, true) }},
		"render": {"render, check, print the render only when it passes (kubectl apply's input; Argo CD's plugin)",
			func(ctx context.Context, a []string, s Streams) int { return runRender(ctx, a, s, version) }},
		"diff": {"what a change does: renders, findings new/fixed (--base REF)",
			func(ctx context.Context, a []string, s Streams) int { return runDiff(ctx, a, s, version) }},
		"selftest": {"prove the gate goes red on what it must stop",
			func(ctx context.Context, a []string, s Streams) int { return runSelftest(ctx, a, s, version) }},
		"status": {"live: is Argo CD's green light telling the truth? (APP [-n argocd])",
			func(ctx context.Context, a []string, s Streams) int { return runStatus(ctx, a, s, version) }},
		"rules": {"list the rules: ids, default severities, docs",
			func(_ context.Context, a []string, s Streams) int { return runRules(a, s) }},
		"version": {"print the version",
			func(_ context.Context, a []string, s Streams) int { return runVersion(a, s, version) }},
		"completion": {"print a shell completion script (bash, zsh, fish)",
			func(_ context.Context, a []string, s Streams) int { return runCompletion(a, s) }},
	}
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("kubectl gate: a deploy gate on the rendered manifests.\n\nUsage: kubectl gate COMMAND [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-9s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\nExamples:\n  kubectl gate check -k overlays/prod\n  kubectl gate pin --write-kustomization overlays/staging\n  kubectl gate rules image-digest\n")
	b.WriteString("\nExit codes: 0 pass, 1 violations, 2 usage, 3 no verdict (render, input, registry or cluster failure).\n" +
		"Run `kubectl gate help COMMAND` (or COMMAND --help) for a command's flags and examples; --version prints the version.\n")
	_, _ = io.WriteString(w, b.String())
}

// exitCode maps an error to an exit code: usage errors 2, others 3.
func exitCode(err error) int {
	var ue *config.UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitNoVerdict
}

// usageErr builds a usage error.
func usageErr(where, format string, args ...any) error {
	return &config.UsageError{Where: where, Err: fmt.Errorf(format, args...)}
}
