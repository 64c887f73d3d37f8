package cmp

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
)

// Settings are the gate's settings an Application passes in
// spec.source.plugin.env, which Argo CD hands over as ARGOCD_ENV_<name>:
//
//	GATE_FAIL_ON=warning                    warnings fail the render too
//	GATE_EXPECT_RESOURCES=12                the render must hold exactly 12 objects
//	GATE_RULES=rollout-single-writer=error  rule severities, comma-separated
//	GATE_DIGEST=verify                      require (default) or verify: ask the registry
//	GATE_TIMEOUT=40s                        the run's deadline (default 50s)
//
// All but the timeout change the verdict and can only tighten the trusted
// config (Spec, config.Tighten).
type Settings struct {
	FailOn          string
	ExpectResources *int
	Rules           map[string]string
	Digest          string
	Timeout         time.Duration
	// Names lists the variables that were set, for the report.
	Names []string
}

// readSettings reads the ARGOCD_ENV_GATE_* variables; other ARGOCD_ENV_
// variables belong to others and are left alone.
func readSettings(environ []string) (Settings, error) {
	var s Settings
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, settingPrefix)
		if !ok {
			continue
		}
		if err := s.set(name, v); err != nil {
			return s, fmt.Errorf("%s=%q: %w", k, v, err)
		}
		s.Names = append(s.Names, k)
	}
	sort.Strings(s.Names)
	return s, nil
}

func (s *Settings) set(name, v string) error {
	switch name {
	case "FAIL_ON":
		if v != config.FailOnError && v != config.FailOnWarning {
			return fmt.Errorf("not %s or %s", config.FailOnError, config.FailOnWarning)
		}
		s.FailOn = v
	case "EXPECT_RESOURCES":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("not a number of objects")
		}
		s.ExpectResources = &n
	case "RULES":
		s.Rules = map[string]string{}
		for _, item := range strings.Split(v, ",") {
			id, sev, ok := strings.Cut(strings.TrimSpace(item), "=")
			if !ok {
				return fmt.Errorf("%q is not ID=error|warning|off", item)
			}
			s.Rules[id] = sev
		}
	case "DIGEST":
		s.Digest = v
	case "TIMEOUT":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("not a positive duration like 40s")
		}
		s.Timeout = d
	default:
		return fmt.Errorf("unknown setting (the gate reads %sFAIL_ON, EXPECT_RESOURCES, RULES, DIGEST, TIMEOUT)", settingPrefix)
	}
	return nil
}

// Spec returns the settings as a config spec to tighten the trusted one
// with (config.Tighten); it is validated as a Gate's spec is, so an
// unknown rule id or severity is an error.
func (s Settings) Spec() (*config.Spec, error) {
	spec := &config.Spec{FailOn: s.FailOn, Rules: s.Rules}
	// Unset is the loosest mode, so that tightening keeps the trusted one.
	spec.Images.Digest = config.DigestOff
	if s.Digest != "" {
		spec.Images.Digest = s.Digest
	}
	spec.Render.ExpectResources = s.ExpectResources
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(s.Names, ", "), err)
	}
	return spec, nil
}

// Helm is how a chart is rendered from the parameters, with the fields of
// an Application's helm source they stand for.
type Helm struct {
	ReleaseName string
	Namespace   string
	ValueFiles  []string // relative to the app's directory
	Values      string   // a YAML document applied after ValueFiles
	Set         []string // path=value
	SetString   []string
}

// Helm maps the parameters onto a chart render: release ARGOCD_APP_NAME
// (its name part) unless release-name is given, namespace
// ARGOCD_APP_NAMESPACE, then values files, values, parameters in that
// order, as Argo CD applies an Application's helm source. A values file
// must be a relative path inside the repository (Argo CD's copy of it).
func (e *Env) Helm() (Helm, error) {
	h := Helm{ReleaseName: e.ReleaseName(), Namespace: e.AppNamespace}
	for _, p := range e.Params {
		switch p.Name {
		case ParamReleaseName:
			h.ReleaseName = *p.String
		case ParamValues:
			h.Values = *p.String
		case ParamValuesFiles:
			for _, f := range p.Array {
				if err := e.insideRepo(f); err != nil {
					return h, fmt.Errorf("parameter %s: %w", ParamValuesFiles, err)
				}
			}
			h.ValueFiles = p.Array
		case ParamHelmParameters:
			h.Set = assignments(p.Map)
		case ParamHelmStringParams:
			h.SetString = assignments(p.Map)
		}
	}
	return h, nil
}

// insideRepo refuses a values file path that is absolute or climbs above
// the repository root (ARGOCD_APP_SOURCE_PATH levels up from the app). The
// renderer reads it through the same checkout walk that refuses symlinks
// leading out.
func (e *Env) insideRepo(path string) error {
	if path == "" || filepath.IsAbs(path) || strings.Contains(path, "://") {
		return fmt.Errorf("%q is not a path relative to the app's directory", path)
	}
	depth := 0
	if sp := filepath.Clean(e.SourcePath); sp != "." && sp != "" {
		depth = len(strings.Split(filepath.ToSlash(sp), "/"))
	}
	up := 0
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(path)), "/") {
		if part == ".." {
			up++
		}
	}
	if up > depth {
		return fmt.Errorf("%q leads out of the repository (the app is at %q)", path, e.SourcePath)
	}
	return nil
}

func assignments(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+escapeCommas(m[k]))
	}
	return out
}

// escapeCommas escapes each comma not already escaped, unless the value is
// a {list}: Argo CD does so before it hands a parameter to helm --set
// (util/helm cleanSetParameters), so "a,b" is one value, not two.
func escapeCommas(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	var prev rune
	for _, r := range v {
		if r == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}
