// Package appset expands Argo CD ApplicationSets into the Applications the
// applicationset-controller would create, reading git generators from a
// local checkout instead of the repo-server.
//
// Supported: the list, git (directories and files) generators, and matrix
// and merge over them, with fasttemplate ({{param}}) and Go-template
// (goTemplate: true, goTemplateOptions) syntax, per-generator templates,
// selectors and templatePatch. Generators that need a cluster, an SCM or a
// plugin service (clusters, clusterDecisionResource, pullRequest,
// scmProvider, plugin) and git generators of another repository cannot be
// expanded offline: Expand returns a *NoVerdictError naming the generator,
// never a partial list.
//
// The semantics follow Argo CD v3's applicationset/generators and
// applicationset/utils packages (read, not copied).
package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Options says where the git generators read.
type Options struct {
	// Root is the checkout the git generators list directories and files of.
	Root string
	// IsCheckout reports whether a git generator's repoURL is the
	// repository checked out at Root; nil accepts every repoURL.
	IsCheckout func(repoURL string) bool
	// Revision says where a git generator's revision is read from: the
	// directory (Root, or a worktree of another revision), or why it
	// cannot be (then the generator is no verdict). nil reads Root for
	// every revision.
	Revision func(revision string) (root, why string)
	// MaxFileBytes caps each file a git files generator reads (0:
	// fsbound.DefaultMaxFileBytes); files are read through the boundary
	// of Root (internal/fsbound).
	MaxFileBytes int64
	// MaxApplications caps the param sets, so the Applications, one
	// expansion makes (0: DefaultMaxApplications); a matrix is checked
	// before its product is made.
	MaxApplications int
	// MaxOutputBytes caps the text the templates of one expansion render
	// (0: DefaultMaxOutputBytes).
	MaxOutputBytes int64
}

// Defaults of the expansion caps (SECURITY.md).
const (
	DefaultMaxApplications = 10_000
	DefaultMaxOutputBytes  = 64 << 20
)

// CapError is an expansion over one of its caps: no verdict on what the
// ApplicationSet generates.
type CapError struct {
	ApplicationSet, What string
	Max                  int64
}

func (e *CapError) Error() string {
	return fmt.Sprintf("ApplicationSet %s: %s over the cap of %d: no verdict", e.ApplicationSet, e.What, e.Max)
}

// Generated is one Application an ApplicationSet generates.
type Generated struct {
	// App is the Application, in the ApplicationSet's namespace.
	App *yaml.RNode
	// Element names the generator element that produced it, e.g.
	// `spec.generators[0].list.elements[1] {"cluster":"prod"}` or
	// `spec.generators[0].git.directories: apps/web`.
	Element string
}

// NoVerdictError says that a generator cannot be expanded here: what it
// generates depends on a cluster, an SCM or another repository.
type NoVerdictError struct {
	// Generator is the generator's field path, e.g. spec.generators[1].clusters.
	Generator string
	Reason    string
}

func (e *NoVerdictError) Error() string {
	return fmt.Sprintf("%s: %s", e.Generator, e.Reason)
}

// spec is an ApplicationSet's spec as the controller reads it.
type spec struct {
	GoTemplate        bool             `json:"goTemplate"`
	GoTemplateOptions []string         `json:"goTemplateOptions"`
	Generators        []map[string]any `json:"generators"`
	Template          map[string]any   `json:"template"`
	TemplatePatch     *string          `json:"templatePatch"`
	SyncPolicy        struct {
		PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion"`
	} `json:"syncPolicy"`
}

// expander holds one ApplicationSet's expansion.
type expander struct {
	opts Options
	spec spec
	name string // namespace/name, for errors
	// templates caches parsed Go templates by options and text.
	templates map[string]*template.Template
	// output is what the templates rendered so far, against the cap.
	output int64
}

func (e *expander) maxApplications() int {
	if e.opts.MaxApplications > 0 {
		return e.opts.MaxApplications
	}
	return DefaultMaxApplications
}

func (e *expander) maxOutput() int64 {
	if e.opts.MaxOutputBytes > 0 {
		return e.opts.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

// tooMany is the error for n param sets where the cap allows fewer.
func (e *expander) tooMany(field string, n int64) error {
	if n <= int64(e.maxApplications()) {
		return nil
	}
	return &CapError{ApplicationSet: e.name, What: fmt.Sprintf("%s: %d generated param sets", field, n), Max: int64(e.maxApplications())}
}

// Expand returns the Applications an ApplicationSet generates, in
// generator order. A generator it cannot expand is a *NoVerdictError; a
// template that does not render (missingkey=error, a bad templatePatch,
// duplicate Application names) is an error as the controller reports it.
func Expand(appset *yaml.RNode, opts Options) ([]Generated, error) {
	e := &expander{opts: opts, name: appset.GetNamespace() + "/" + appset.GetName()}
	if err := decode(appset, "spec", &e.spec); err != nil {
		return nil, fmt.Errorf("reading ApplicationSet %s: %w", e.name, err)
	}
	if len(e.spec.Generators) == 0 {
		return nil, fmt.Errorf("ApplicationSet %s: spec.generators is empty", e.name)
	}
	var out []Generated
	seen := map[string]string{}
	for i, g := range e.spec.Generators {
		field := fmt.Sprintf("spec.generators[%d]", i)
		gens, err := e.generator(g, field)
		if err != nil {
			return nil, err
		}
		for _, gen := range gens {
			if err := e.tooMany("spec.generators", int64(len(out)+len(gen.params))); err != nil {
				return nil, err
			}
			apps, err := e.renderAll(gen)
			if err != nil {
				return nil, err
			}
			for _, a := range apps {
				if prev, dup := seen[a.App.GetName()]; dup {
					return nil, fmt.Errorf("ApplicationSet %s generates two Applications named %q (%s and %s); Argo CD refuses to create either",
						e.name, a.App.GetName(), prev, a.Element)
				}
				seen[a.App.GetName()] = a.Element
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// decode reads a field of a node into v through JSON, as the controller's
// typed client would.
func decode(n *yaml.RNode, field string, v any) error {
	f := n.Field(field)
	if f == nil {
		return errors.New("no " + field)
	}
	data, err := f.Value.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// generated is one generator's param sets with the template they render.
type generated struct {
	params   []params
	template map[string]any
}

// params is one param set with the element that produced it.
type params struct {
	values map[string]any
	origin string
}

// generator expands one top-level generator entry: each generator type it
// sets gives param sets and a template (the generator's own template over
// spec.template).
func (e *expander) generator(g map[string]any, field string) ([]generated, error) {
	kinds, err := generatorKinds(g, field)
	if err != nil {
		return nil, err
	}
	var out []generated
	for _, kind := range kinds {
		ps, err := e.params(g, kind, field, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, generated{params: ps, template: mergeTemplate(generatorTemplate(g, kind), e.spec.Template)})
	}
	return out, nil
}

// offline lists the generator types that need something the gate does not
// have, with what that is.
var offline = map[string]string{
	"clusters":                "the clusters generator reads Argo CD's cluster Secrets in the cluster",
	"clusterDecisionResource": "the clusterDecisionResource generator reads a resource in the cluster",
	"pullRequest":             "the pullRequest generator asks an SCM for open pull requests",
	"scmProvider":             "the scmProvider generator asks an SCM for its repositories",
	"plugin":                  "the plugin generator calls a plugin service",
	"oci":                     "the oci generator reads an OCI registry",
}

// kindOrder is the order Argo CD's ApplicationSetGenerator struct lists the
// generator types in; a generator entry setting several yields them so.
var kindOrder = []string{"list", "clusters", "git", "scmProvider", "clusterDecisionResource", "pullRequest", "matrix", "merge", "plugin", "oci"}

// generatorKinds returns the generator types an entry sets; an entry that
// sets none, or an unknown one, is an error.
func generatorKinds(g map[string]any, field string) ([]string, error) {
	var kinds []string
	for _, k := range kindOrder {
		if v, ok := g[k]; ok && v != nil {
			kinds = append(kinds, k)
		}
	}
	for k := range g {
		if k != "selector" && !contains(kindOrder, k) {
			return nil, fmt.Errorf("%s: unknown generator %q", field, k)
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%s: no generator set", field)
	}
	return kinds, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// generatorTemplate is the template a generator type carries (list.template,
// git.template, …), or nil.
func generatorTemplate(g map[string]any, kind string) map[string]any {
	if m, ok := g[kind].(map[string]any); ok {
		if t, ok := m["template"].(map[string]any); ok {
			return t
		}
	}
	return nil
}

// describe renders a param set's element compactly for messages.
func describe(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// joinOrigins names a combined param set: matrix "a × b", merge "a + b".
func joinOrigins(sep string, origins ...string) string {
	return strings.Join(origins, sep)
}
