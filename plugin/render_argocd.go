package plugin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/cmp"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
)

// `render` as Argo CD's config-management plugin (README "Inside Argo CD"):
// the CMP server runs generate in the app's directory of its copy of the
// repository, with the app's environment (internal/cmp), and takes stdout
// as the manifests and a non-zero exit, with stderr, as the error it shows
// and caches until a hard refresh.

// defaultArgoTimeout is render's --timeout inside Argo CD: under the
// repo-server's 60 s budget for a manifest request (the CMP server's own
// is 90 s), so the gate's own no-verdict line, naming what was still
// running, is what Argo CD shows rather than its timeout.
const defaultArgoTimeout = 50 * time.Second

// argoRun is one generate run.
type argoRun struct {
	env      *cmp.Env
	settings *config.Spec
	temp     []string // files to remove at the end
}

func argoCDEnv() bool { return cmp.Inside(os.LookupEnv) }

// fromArgoCD sets the options to render the working directory as Argo CD
// would: a kustomization with kustomize, a chart with Helm (release and
// namespace from the app, values from the parameters), else a directory of
// manifests.
func (o *options) fromArgoCD(fs *pflag.FlagSet) (*argoRun, error) {
	env, err := cmp.Read(os.LookupEnv, os.Environ())
	a := &argoRun{env: env}
	if err != nil {
		return a, usageErr("Argo CD environment", "%v", err)
	}
	if a.settings, err = env.Settings.Spec(); err != nil {
		return a, usageErr("Argo CD environment", "%v", err)
	}
	if !fs.Changed("timeout") {
		o.timeout = defaultArgoTimeout
		if env.Settings.Timeout > 0 {
			o.timeout = env.Settings.Timeout
		}
	}
	switch {
	case isKustomizationDir("."):
		o.kustomizations = []string{"."}
	case fileExists("Chart.yaml"):
		o.charts = []string{"."}
		return a, a.helm(o)
	default:
		o.files = []string{"."}
	}
	if len(env.Params) > 0 {
		return a, usageErr(cmp.EnvParameters, "plugin parameters (%s) apply to a Helm chart; %s holds a %s", env.Params[0].Name, orDot(env.SourcePath), kindOf(o))
	}
	return a, nil
}

// helm sets the chart options from the app and its parameters.
func (a *argoRun) helm(o *options) error {
	h, err := a.env.Helm()
	if err != nil {
		return usageErr(cmp.EnvParameters, "%v", err)
	}
	root := repoRoot(a.env.SourcePath)
	for _, f := range h.ValueFiles {
		if err := insideRoot(root, f); err != nil {
			return usageErr(cmp.EnvParameters, "parameter %s: %v", cmp.ParamValuesFiles, err)
		}
	}
	o.helm.Release, o.helm.Namespace, o.helm.Values = h.ReleaseName, h.Namespace, h.ValueFiles
	o.helm.Set, o.helm.SetString = h.Set, h.SetString
	o.helm.KubeVersion, o.helm.APIVersions = a.env.KubeVersion, a.env.APIVersions
	if h.Values != "" {
		f, err := os.CreateTemp("", "kubectl-gate-values-*.yaml")
		if err != nil {
			return fmt.Errorf("writing the %s parameter to a file: %w", cmp.ParamValues, err)
		}
		a.temp = append(a.temp, f.Name())
		_, err = f.WriteString(h.Values)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing the %s parameter to %s: %w", cmp.ParamValues, f.Name(), err)
		}
		o.helm.Values = append(o.helm.Values, f.Name())
	}
	return nil
}

// options adds what the app's environment decides to the pipeline's
// options: the schema target (KUBE_VERSION, unless the trusted config pins
// one) and the ARGOCD_ENV_GATE_* settings, which may only tighten.
func (a *argoRun) options(o *options, popts pipeline.Options, base *config.Object) (pipeline.Options, error) {
	if base == nil || base.Spec.Schema.KubernetesVersion == "" {
		target, err := a.env.SchemaTarget()
		if err != nil {
			return popts, err // no verdict: the gate cannot judge for that cluster
		}
		if o.kubernetesVersion == "" {
			o.kubernetesVersion = target
		}
	}
	flags := popts.Flags
	popts.Flags = func(s *config.Spec) error {
		if flags != nil {
			if err := flags(s); err != nil {
				return err
			}
		}
		// The Application, like an in-tree Gate, may be written by a pull
		// request: its settings only tighten, whatever the trusted config
		// allows in-tree objects.
		loosen := s.AllowInTreeLoosening
		s.AllowInTreeLoosening = false
		*s = config.Tighten(*s, *a.settings, ruleDefaults())
		s.AllowInTreeLoosening = loosen
		return nil
	}
	popts.FlagsDecide = popts.FlagsDecide || o.kubernetesVersion != "" || len(a.env.Settings.Names) > 0
	return popts, nil
}

// streams returns the streams of a generate run: every stderr line starts
// with the app and its revision (Argo CD caches the message), and neither
// stream is a terminal.
func (a *argoRun) streams(s Streams) Streams {
	s.Err = a.stderr(s)
	if s.reportErr != nil && a != nil && a.env != nil {
		// The report bypasses Run's line filter (its own workflow
		// commands); it still carries the app and revision on every line.
		s.reportErr = &linePrefixer{w: s.reportErr, prefix: a.env.Prefix()}
	}
	s.ErrIsTTY, s.OutIsTTY = false, false
	return s
}

func (a *argoRun) stderr(s Streams) io.Writer {
	if a == nil || a.env == nil {
		return s.Err
	}
	return &linePrefixer{w: s.Err, prefix: a.env.Prefix()}
}

func (a *argoRun) cleanup() {
	for _, f := range a.temp {
		_ = os.Remove(f)
	}
}

// linePrefixer writes prefix before every line.
type linePrefixer struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	midLine bool
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !l.midLine {
			b.WriteString(l.prefix)
		}
		b.Write(line)
		l.midLine = line[len(line)-1] != '\n'
	}
	if _, err := l.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ruleDefaults maps every rule id to its default severity, for
// config.Tighten.
func ruleDefaults() map[string]string {
	out := map[string]string{}
	for _, r := range all.Rules() {
		out[r.ID] = string(r.Default)
	}
	return out
}

// isKustomizationDir reports whether dir holds a kustomization file, the
// names kustomize reads.
func isKustomizationDir(dir string) bool {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if fileExists(filepath.Join(dir, name)) {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func kindOf(o *options) string {
	if len(o.kustomizations) > 0 {
		return "kustomization"
	}
	return "directory of manifests"
}

// repoRoot is the root of Argo CD's copy of the repository: the working
// directory is the app's path in it.
func repoRoot(sourcePath string) string {
	root := "."
	if sp := filepath.Clean(sourcePath); sp != "." && sp != "" && !filepath.IsAbs(sp) {
		root = strings.Repeat("../", len(strings.Split(filepath.ToSlash(sp), "/")))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return root
	}
	return abs
}

// insideRoot refuses a values file that resolves, symlinks followed, out
// of the repository: Argo CD's copy of it is all a generate run may read.
func insideRoot(root, path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("values file %q: %w", path, err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("the repository root %s: %w", root, err)
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, abs); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("values file %q resolves to %s, outside the repository", path, abs)
	}
	return nil
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}
