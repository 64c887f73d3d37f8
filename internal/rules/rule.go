package rules

import (
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// Rule is one check. Check returns findings at the rule's default severity;
// Run applies the configured severity and drops findings of rules that are
// off. A rule whose Check is nil is judged elsewhere (the live rules of
// `kubectl gate status`): it is registered so config, output and docs know
// its id.
type Rule struct {
	ID      string
	Default finding.Severity
	// Doc says when the rule fires, in one line (--help, SARIF, README).
	Doc string
	// Outage is the outage it prevents, in one line (README).
	Outage string
	// Fix says how to make the rule pass, in one line (docs/rules.md,
	// SARIF help, `kubectl gate rules ID`).
	Fix    string
	Family string
	Check  func(*Context) []finding.Finding
	// NoVerdict marks a rule whose findings mean the gate could not decide
	// (a registry that did not answer): they are always errors and end in
	// exit 3; no flag, config or in-tree object turns them off or lowers
	// them (README, "Exit codes").
	NoVerdict bool
	// MayNoVerdict marks a rule some of whose findings are no verdict (a
	// source it could not render, a schema it could not load): it runs even
	// when configured off, and those findings are kept (finding.Configure);
	// off drops only its findings that are a verdict.
	MayNoVerdict bool
	// Unwaivable marks a rule no exception, waiver annotation or baseline
	// may suppress (render-empty, gate-placement, the not-rendered rules,
	// the exception rules themselves). Findings that are no verdict are
	// never waivable whatever the rule (README "Waivers, baselines and
	// pull requests").
	Unwaivable bool
	// Mutation says in a few words what selftest changes to make this rule
	// fire; Mutants are those changes.
	Mutation string
	Mutants  []Mutant
}

// Families, in the order rules are listed.
var Families = []string{"render", "schema", "images", "rollouts", "argocd", "flux", "policy", "exceptions", "live"}

// Mutant changes a copy of a passing input so that its rule must fire.
// Apply edits s in place and returns false when the input holds nothing to
// mutate (no digest to replace, no Rollout to break); selftest then reports
// the row as "not applicable".
type Mutant struct {
	Name  string
	Apply func(s *Subject) bool
	// NeedsApps marks a mutant that changes the renders of Applications'
	// sources: selftest runs it only when they were rendered (--apps-root).
	NeedsApps bool
}

// Subject is what a Mutant may change: a copy of the resources, of the
// configuration and of the Applications' source renders.
type Subject struct {
	Resources []*yaml.RNode
	Config    *config.Spec
	Apps      []argo.AppSource
}

// Context is what a rule's Check sees: the rendered resources and the
// configuration, plus facts gathered before the rules ran.
type Context struct {
	Resources []*yaml.RNode
	Config    *config.Spec
	// Counted is the number of resources that count as rendered (local
	// config and the gate's own config excluded).
	Counted int
	// Placement holds the gate-placement problems the renderer saw.
	Placement []finding.Finding
	// Resolutions holds registry answers by reference; nil when the gate
	// ran without a resolver (digest: require).
	Resolutions map[string]images.Resolution
	// Pinning is true when the gate resolves tags instead of reporting them.
	Pinning bool
	// Apps holds, for each Argo CD Application of the input whose source
	// was rendered (--apps-root), that render.
	Apps []argo.AppSource
	// CRDs are CustomResourceDefinitions from outside the render (--crd,
	// schema.crds), read by the shell; the schema rules use them.
	CRDs []*yaml.RNode
	// Policy holds the findings of the configured policies (--policy,
	// spec.policies, --kyverno-policy, --rego), evaluated before the rules
	// ran by the shell's policy checker.
	Policy []finding.Finding

	index *manifest.Index
	cache map[string]any
}

// Index returns the resources indexed by kind, namespace and name.
func (c *Context) Index() *manifest.Index {
	if c.index == nil {
		c.index = manifest.NewIndex(c.Resources)
	}
	return c.index
}

// Memo returns the value cached under key for this run, computing it once:
// rules that need a whole-render view (which Rollouts name which Service,
// every image of the render) build it once, not once per rule or object.
func Memo[T any](c *Context, key string, build func() T) T {
	if v, ok := c.cache[key]; ok {
		return v.(T)
	}
	if c.cache == nil {
		c.cache = map[string]any{}
	}
	v := build()
	c.cache[key] = v
	return v
}

// Run runs every rule with a Check that the configuration does not turn
// off, stamps each finding with its rule's id and applies the configured
// severities (finding.Configure, the one place they are applied).
func Run(c *Context, all []Rule) []finding.Finding {
	var out []finding.Finding
	for _, r := range all {
		if r.Check == nil || (c.Config.Rules[r.ID] == finding.Off && !r.NoVerdict && !r.MayNoVerdict) {
			continue
		}
		for _, f := range r.Check(c) {
			f.Rule = r.ID
			f.NoVerdict = f.NoVerdict || r.NoVerdict
			out = append(out, f)
		}
	}
	return finding.Configure(out, c.Config.Rules)
}

// Ran lists the ids of the rules Run runs under cfg's severities, in
// order: the reports say which rules judged the render (JUnit skips the
// others).
func Ran(cfg *config.Spec, all []Rule) []string {
	var out []string
	for _, r := range all {
		if r.Check != nil && (cfg.Rules[r.ID] != finding.Off || r.NoVerdict || r.MayNoVerdict) {
			out = append(out, r.ID)
		}
	}
	return out
}

// OnResources makes a Mutant's Apply from an edit of the resources: edit
// returns the mutated resources, or false when it does not apply.
func OnResources(edit func(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool)) func(*Subject) bool {
	return func(s *Subject) bool {
		out, ok := edit(s.Resources, s.Config)
		if ok {
			s.Resources = out
		}
		return ok
	}
}

// Excluded returns the entry of spec.argocd.exclude (--exclude-app) that
// names r ("name" or "namespace/name"), or "": the trusted caller took it
// out of scope, and the report lists it.
func Excluded(c *Context, r *yaml.RNode) string {
	e, _ := ExcludedBy(c, r)
	return e
}

// ExcludedBy is Excluded and what excluded it: "--exclude-app" when the
// flag added the entry, else "spec.argocd.exclude".
func ExcludedBy(c *Context, r *yaml.RNode) (entry, by string) {
	for _, e := range c.Config.ArgoCD.Exclude {
		if ExcludeMatches(e, r) {
			if slices.Contains(c.Config.ArgoCD.FromFlag, e) {
				return e, "--exclude-app"
			}
			return e, "spec.argocd.exclude"
		}
	}
	return "", ""
}

// ExcludeMatches reports whether an exclusion entry ("name" or
// "namespace/name") names r.
func ExcludeMatches(e string, r *yaml.RNode) bool {
	return e == manifest.Name(r) || e == manifest.Namespace(r)+"/"+manifest.Name(r)
}
