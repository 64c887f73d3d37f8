package plugin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	suggestpkg "github.com/kubectl-gate/kubectl-gate/internal/suggest"
)

// Help in kubectl's style: `kubectl gate COMMAND --help` and `kubectl gate
// help COMMAND` print, on stdout, what the command does, 2–4 examples, its
// usage line and every flag with its description. Mistakes are exit 2 with
// a line that names what was wrong and, where one is close, what was meant
// ("did you mean").

// commandHelp is the text of a command's --help besides its flags.
type commandHelp struct {
	usage    string
	long     string
	examples []string // each "# what it does\nkubectl gate …"
}

var helps = map[string]commandHelp{
	"check": {
		usage: "kubectl gate check (-k DIR | -f FILE|DIR|- | --chart DIR)... [flags]",
		long: "Render the inputs as the cluster will receive them, check every object (schema, policies, the rules),\n" +
			"print a report and exit with the verdict: 0 pass, 1 violations, 2 usage, 3 no verdict.",
		examples: []string{
			"# Render a kustomization in process and check it\nkubectl gate check -k overlays/prod",
			"# Check a rendered stream, as SARIF for GitHub code scanning\nkustomize build overlays/prod | kubectl gate check -f - -o sarif > gate.sarif",
			"# Check every Argo CD Application of the repository and their sources\nkubectl gate check -f argocd/ --apps-root . --repo-url https://github.com/example/gitops.git",
			"# A Helm chart, with the trusted config from the protected branch\nkubectl gate check --chart charts/shop -n shop --config \"$RUNNER_TEMP/gate.yaml\"",
		},
	},
	"pin": {
		usage: "kubectl gate pin (-k DIR | -f FILE|DIR|- | --chart DIR | --write-kustomization DIR)... [flags]",
		long: "Resolve every image tag to its digest through the registry, check the pinned render like check does,\n" +
			"and print it on stdout only when the gate passed (or write the digests into a kustomization).",
		examples: []string{
			"# Print the pinned render of an overlay\nkubectl gate pin -k overlays/staging > pinned.yaml",
			"# Keep the source pinned: write the digests into the kustomization's images:\nkubectl gate pin --write-kustomization overlays/staging",
			"# Pin one platform's image instead of the index\nkubectl gate pin -k overlays/prod --platform linux/arm64",
		},
	},
	"selftest": {
		usage: "kubectl gate selftest (-k DIR | -f FILE|DIR|- | --chart DIR)... [flags]",
		long: "Prove the gate goes red: for every enabled rule, break a copy of a passing input the way the rule must\n" +
			"catch, run the real gate on it, and exit 1 when a mutant gets through.",
		examples: []string{
			"# Every rule's mutants against the prod overlay\nkubectl gate selftest -k overlays/prod",
			"# With the configuration check uses in CI\nkubectl gate selftest -k overlays/prod --config ci/gate.yaml -o json",
			"# Every Application source of the repository\nkubectl gate selftest -f argocd/ --apps-root .",
		},
	},
	"render": {
		usage: "kubectl gate render (-k DIR | -f FILE|DIR|- | --chart DIR) [flags]",
		long: "Render and check like check does, and print the render on stdout only when the verdict is pass;\n" +
			"findings go to stderr, and exit 1 or 3 prints nothing on stdout. With ARGOCD_APP_NAME set and no input,\n" +
			"it renders the current directory as Argo CD's config-management plugin.",
		examples: []string{
			"# Apply only what passed the gate\nkubectl gate render -k overlays/prod | kubectl apply -f -",
			"# A chart, rendered like helm template and checked\nkubectl gate render --chart charts/shop -n shop > shop.yaml",
		},
	},
	"diff": {
		usage: "kubectl gate diff --base REF (-k DIR | -f FILE|DIR|- | --chart DIR)... [flags]",
		long: "Render and check the inputs at git REF (a temporary worktree) and in the working tree, and print what\n" +
			"changed: objects added, removed and changed, and findings new, fixed and unchanged. Exit 1 only for new\n" +
			"error findings; 3 when the working tree has no verdict.",
		examples: []string{
			"# What this branch does to the prod overlay, against main\nkubectl gate diff --base origin/main -k overlays/prod",
			"# A pull-request comment, every Argo CD Application of the repository\nkubectl gate diff --base origin/main -f argocd/ --apps-root . -o markdown > comment.md",
		},
	},
	"status": {
		usage: "kubectl gate status APP [-n argocd] [--revision SHA | --git DIR] [-k DIR | --apps-root DIR] [flags]",
		long: "Read an Argo CD Application from the cluster and judge whether its green light is true: the synced\n" +
			"commit, the images running, the object count and the objects' health.",
		examples: []string{
			"# Is shop-prod running the checked-out commit and its images?\nkubectl gate status shop-prod -n argocd --git . --apps-root .",
			"# Against one expected commit and a kustomization's render\nkubectl gate status shop-prod --revision 4f1c2e9 -k overlays/prod",
		},
	},
	"rules": {
		usage: "kubectl gate rules [ID] [-o text|json|markdown]",
		long:  "List the rules: ids, default severities and when each fires; with an ID, that rule's help (why, how to fix, how to waive).",
		examples: []string{
			"# Every rule\nkubectl gate rules",
			"# One rule's help\nkubectl gate rules image-digest",
			"# Machine-readable, for tooling\nkubectl gate rules -o json",
		},
	},
	"version": {
		usage:    "kubectl gate version [-o text|json]",
		long:     "Print the version of the plugin (also: kubectl gate --version).",
		examples: []string{"kubectl gate version", "kubectl gate version -o json"},
	},
	"completion": {
		usage: "kubectl gate completion bash|zsh|fish",
		long: "Print a shell completion script for kubectl-gate (subcommands, flags, rule ids for --rule, directories\n" +
			"for -k). For `kubectl gate <TAB>`, put the kubectl_complete-gate executable next to kubectl-gate on PATH.",
		examples: []string{
			"# bash, for this shell\nsource <(kubectl gate completion bash)",
			"# zsh\nkubectl gate completion zsh > \"${fpath[1]}/_kubectl-gate\"",
			"# fish\nkubectl gate completion fish > ~/.config/fish/completions/kubectl-gate.fish",
		},
	},
}

// printHelp prints a command's help on w: description, examples, usage and
// flags.
func printHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	h := helps[name]
	var b strings.Builder
	if h.long != "" {
		b.WriteString(h.long + "\n\n")
	}
	if len(h.examples) > 0 {
		b.WriteString("Examples:\n")
		for i, ex := range h.examples {
			if i > 0 {
				b.WriteString("\n")
			}
			for _, l := range strings.Split(ex, "\n") {
				b.WriteString("  " + l + "\n")
			}
		}
		b.WriteString("\n")
	}
	if fs != nil && fs.HasFlags() {
		b.WriteString("Options:\n" + fs.FlagUsagesWrapped(110) + "\n")
	}
	if h.usage != "" {
		b.WriteString("Usage:\n  " + h.usage + "\n\n")
	}
	b.WriteString("Exit codes: 0 pass, 1 violations, 2 usage, 3 no verdict. Rules: kubectl gate rules; README.md and docs/rules.md.\n")
	_, _ = io.WriteString(w, b.String())
}

// didYouMean returns the candidate closest to s within a small edit
// distance, or "".
func didYouMean(s string, candidates []string) string { return suggestpkg.Closest(s, candidates) }

// suggest is ` (did you mean "X"?)` or "".
func suggest(s string, candidates []string) string { return suggestpkg.Phrase(s, candidates) }

// flagNames lists a flag set's long names as "--name".
func flagNames(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) { out = append(out, "--"+f.Name) })
	return out
}

// flagError explains a pflag parse error: the flag it names with the
// closest real one, and a duration without its unit.
func flagError(fs *pflag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		return msg + suggest(name, flagNames(fs))
	}
	if strings.Contains(msg, "time: missing unit in duration") {
		return msg + ": give a unit, e.g. 30s, 5m or 1h"
	}
	return msg
}

// unexpectedArgs is the usage error for positional arguments a command does
// not take: each is named, and one that is a directory or file is shown
// with the flag that takes it.
func unexpectedArgs(args []string) error {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	hint := ""
	if cmd := didYouMean(args[0], commandNames()); cmd != "" {
		hint = fmt.Sprintf("; %q is a command: kubectl gate %s …", cmd, cmd)
	} else if fi, err := os.Stat(args[0]); err == nil {
		if fi.IsDir() {
			hint = fmt.Sprintf("; did you mean -k %s (a kustomization) or -f %s (rendered manifests)?", args[0], args[0])
		} else {
			hint = fmt.Sprintf("; did you mean -f %s?", args[0])
		}
	}
	return usageErr("arguments", "unexpected argument(s) %s: inputs are given with -k, -f or --chart%s", strings.Join(quoted, " "), hint)
}

func commandNames() []string {
	names := []string{"help"}
	for n := range commands("") {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// pathMistake explains an input path given to the wrong flag or not there:
// -k on a file (use -f, or -k on its directory), a path that does not exist
// (with a sibling of a close name), --config on a kustomization.
func pathMistake(flag, p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if !os.IsNotExist(err) {
			return nil // unreadable: the render says so, with the cause
		}
		near := ""
		dir, base := filepath.Split(filepath.Clean(p))
		if entries, err := os.ReadDir(dirOrDot(dir)); err == nil {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if m := didYouMean(base, names); m != "" {
				near = fmt.Sprintf(" (did you mean %s?)", filepath.Join(dir, m))
			}
		}
		if flag == "--config" {
			return usageErr(flag, "%s does not exist%s", p, near)
		}
		// An input that is not there is no verdict (exit 3), as an
		// unreadable one is: nothing was checked.
		return fmt.Errorf("%s: %s does not exist%s", flag, p, near)
	}
	switch flag {
	case "-k":
		if !fi.IsDir() {
			if isKustomizationFile(p) {
				return usageErr(flag, "%s is a kustomization file: -k takes its directory: -k %s", p, dirOrDot(filepath.Dir(p)))
			}
			return usageErr(flag, "%s is a file: -k takes a kustomization directory; for rendered manifests use -f %s", p, p)
		}
	case "--config":
		if fi.IsDir() {
			return usageErr(flag, "%s is a directory: --config takes a Gate or Pin file", p)
		}
		if isKustomizationFile(p) {
			return usageErr(flag, "%s is a kustomization, not a Gate or Pin object: check it with -k %s; --config takes a file of kind: Gate", p, dirOrDot(filepath.Dir(p)))
		}
	case "--chart":
		if !fi.IsDir() {
			return usageErr(flag, "%s is a file: --chart takes a chart directory (holding Chart.yaml); a packaged chart must be unpacked first (tar xzf)", p)
		}
	}
	return nil
}

func dirOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}

func isKustomizationFile(p string) bool {
	switch filepath.Base(p) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// ruleIDs are the ids --rule and `rules ID` accept.
func ruleIDs() []string { return all.IDs() }
