package plugin

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// Shell completion. `kubectl gate __complete WORD… PARTIAL` answers in the
// protocol kubectl (1.26+) uses for plugins and Cobra for itself: one
// candidate per line, then ":N", a directive (shellDirective*). kubectl
// calls the kubectl_complete-gate executable (cmd/kubectl_complete-gate)
// for `kubectl gate <TAB>`, which asks kubectl-gate; the scripts of
// `kubectl gate completion bash|zsh|fish` ask it directly for
// `kubectl-gate <TAB>`.

// Cobra's ShellCompDirective values, which kubectl passes to the shell.
const (
	shellDirectiveDefault   = 0
	shellDirectiveNoSpace   = 2
	shellDirectiveNoFile    = 4
	shellDirectiveFilterDir = 16
)

// dirFlags take a directory, fileFlags a file or directory.
var (
	dirFlags  = []string{"-k", "--kustomize", "--chart", "--apps-root", "--write-kustomization", "--git", "--cache", "--helm-repo-cache"}
	fileFlags = []string{"-f", "--filename", "--config", "--crd", "--policy", "--values", "--kyverno-policy", "--rego", "--kubeconfig"}
)

// complete returns the candidates for the last word of words (the words
// after `kubectl gate`, the last one being completed) and a directive.
func complete(words []string) ([]string, int) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	if len(words) == 1 {
		return withPrefix(commandNames(), cur), shellDirectiveNoFile
	}
	cmd, prev := words[0], words[len(words)-2]
	fs := completionFlags(cmd)
	switch {
	case prev == "--rule":
		if id, _, ok := strings.Cut(cur, "="); ok {
			return withPrefix([]string{id + "=error", id + "=warning", id + "=off"}, cur), shellDirectiveNoFile
		}
		var ids []string
		for _, id := range ruleIDs() {
			ids = append(ids, id+"=")
		}
		return withPrefix(ids, cur), shellDirectiveNoFile | shellDirectiveNoSpace
	case prev == "-o" || prev == "--output":
		formats := report.Formats
		switch cmd {
		case "selftest", "version":
			formats = []string{"text", "json"}
		case "rules":
			formats = []string{"text", "json", "markdown"}
		}
		return withPrefix(formats, cur), shellDirectiveNoFile
	case prev == "--fail-on":
		return withPrefix([]string{"error", "warning"}, cur), shellDirectiveNoFile
	case prev == "--digest":
		return withPrefix([]string{"require", "verify", "off"}, cur), shellDirectiveNoFile
	case contains(dirFlags, prev):
		return nil, shellDirectiveFilterDir
	case contains(fileFlags, prev):
		return nil, shellDirectiveDefault
	case strings.HasPrefix(cur, "-") && fs != nil:
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, "--"+f.Name)
			}
		})
		sort.Strings(names)
		return withPrefix(names, cur), shellDirectiveNoFile
	case cmd == "rules":
		return withPrefix(ruleIDs(), cur), shellDirectiveNoFile
	case cmd == "completion":
		return withPrefix([]string{"bash", "zsh", "fish"}, cur), shellDirectiveNoFile
	case cmd == "help":
		return withPrefix(commandNames(), cur), shellDirectiveNoFile
	}
	return nil, shellDirectiveNoFile
}

// completionFlags is the flag set of a command, for its flag names.
func completionFlags(cmd string) *pflag.FlagSet {
	switch cmd {
	case "check", "pin", "selftest":
		return newFlagSet(cmd, &options{}, cmd == "pin")
	case "status":
		return newStatusFlagSet(&statusOptions{})
	case "rules":
		fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
		fs.String("output", "", "")
		fs.Bool("markdown", false, "")
		return fs
	case "version":
		fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
		fs.String("output", "", "")
		return fs
	}
	return nil
}

func withPrefix(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runComplete is the hidden `__complete` command.
func runComplete(args []string, w io.Writer) int {
	cands, directive := complete(args)
	var b strings.Builder
	for _, c := range cands {
		b.WriteString(c + "\n")
	}
	fmt.Fprintf(&b, ":%d\n", directive)
	_, _ = io.WriteString(w, b.String())
	return ExitPass
}

// runCompletion prints the completion script of a shell.
func runCompletion(args []string, s Streams) int {
	fs := pflag.NewFlagSet("kubectl gate completion", pflag.ContinueOnError)
	if done, code := parse(fs, args, s, 1); done {
		return code
	}
	script, ok := completionScripts[fs.Arg(0)]
	if !ok {
		return fail(s.Err, usageErr("completion", "give a shell: bash, zsh or fish%s", suggest(fs.Arg(0), []string{"bash", "zsh", "fish"})))
	}
	_, _ = io.WriteString(s.Out, script)
	return ExitPass
}

const bashCompletion = `# bash completion for kubectl-gate: source <(kubectl gate completion bash)
_kubectl_gate() {
    local cur="${COMP_WORDS[COMP_CWORD]}" out directive
    out=$(kubectl-gate __complete "${COMP_WORDS[@]:1:$((COMP_CWORD-1))}" "$cur" 2>/dev/null) || return
    directive=${out##*:}
    out=${out%:*}
    if (( directive & 16 )); then
        COMPREPLY=($(compgen -d -- "$cur"))
    elif [[ -z ${out//[[:space:]]/} ]] && (( ! (directive & 4) )); then
        COMPREPLY=($(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$out" -- "$cur"))
        if (( directive & 2 )); then compopt -o nospace 2>/dev/null; fi
    fi
}
complete -F _kubectl_gate kubectl-gate
`

var completionScripts = map[string]string{
	"bash": bashCompletion,
	"zsh":  "#compdef kubectl-gate\n# zsh completion for kubectl-gate: kubectl gate completion zsh > \"${fpath[1]}/_kubectl-gate\"\nautoload -U +X bashcompinit && bashcompinit\n" + bashCompletion,
	"fish": `# fish completion for kubectl-gate: kubectl gate completion fish > ~/.config/fish/completions/kubectl-gate.fish
function __kubectl_gate_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l out (kubectl-gate __complete $words (commandline -ct) 2>/dev/null)
    set -l directive (string replace ':' '' -- $out[-1])
    set -e out[-1]
    if test (math "bitand($directive, 16)") -ne 0
        __fish_complete_directories (commandline -ct)
    else if test (count $out) -eq 0; and test (math "bitand($directive, 4)") -eq 0
        __fish_complete_path (commandline -ct)
    else
        printf '%s\n' $out
    end
end
complete -c kubectl-gate -f -a '(__kubectl_gate_complete)'
`,
}
