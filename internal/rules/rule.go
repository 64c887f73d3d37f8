package rules

import (
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// Severity is how much a finding matters. Only SeverityError stops a deploy
// by default; `--fail-on warning` makes warnings stop it too.
type Severity string

// Severities, as they appear in output and in the KRM result shape.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one thing a rule found. It is data, never an error: an error
// means the gate could not evaluate.
type Finding struct {
	Rule        string       `json:"rule"`
	Severity    Severity     `json:"severity"`
	Message     string       `json:"message"`
	ResourceRef *ResourceRef `json:"resourceRef,omitempty"`
	Field       *Field       `json:"field,omitempty"`
	File        *File        `json:"file,omitempty"`
	// NoVerdict marks a finding that means the gate could not finish
	// (image-resolve): the plugin exits 3 for it, before 1.
	NoVerdict bool `json:"-"`
}

// ResourceRef names the object a finding is about.
type ResourceRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
}

// Field names the field a finding is about, with its value and, where the
// gate knows one, the value it proposes.
type Field struct {
	Path          string `json:"path"`
	CurrentValue  any    `json:"currentValue,omitempty"`
	ProposedValue any    `json:"proposedValue,omitempty"`
}

// File names the source file that produced the value, where known.
type File struct {
	Path  string `json:"path"`
	Index int    `json:"index,omitempty"`
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
	Placement []Finding
	// Resolutions holds registry answers by reference; nil when the gate
	// ran without a resolver (digest: require).
	Resolutions map[string]images.Resolution
	// Pinning is true when the gate resolves tags instead of reporting them.
	Pinning bool
	// RequirePinnedBy enables the image-pinned-by rule.
	RequirePinnedBy bool
	// Apps holds, for each Argo CD Application of the input whose source
	// was rendered (--apps-root), that render.
	Apps []AppSource

	index *Index
	cache map[string]any
}

// Index returns the resources indexed by kind, namespace and name.
func (c *Context) Index() *Index {
	if c.index == nil {
		c.index = NewIndex(c.Resources)
	}
	return c.index
}

// AppSource is an Argo CD Application with the render of one of its local
// sources.
type AppSource struct {
	// App is the Application object from the input.
	App *yaml.RNode
	// Index is the source's index in spec.sources, or -1 for spec.source.
	Index int
	// Path is the source directory that was rendered.
	Path string
	// Resources is the source's render; Err is set when it could not be
	// rendered, Skipped when the gate does not render that kind of source
	// (Helm, a remote repository) and says why.
	Resources []*yaml.RNode
	Err       error
	Skipped   string
}

// Rule is one check. Check returns findings at the rule's default severity;
// the engine applies the configured severity and drops findings of rules that
// are off.
type Rule struct {
	ID       string
	Default  Severity
	Doc      string
	Outage   string // the outage it prevents, one line (README)
	Family   string
	Check    func(*Context) []Finding
	Mutation string // what selftest changes to make this rule fire
}

// registry holds every rule by id. A family adds its list here.
var registry = byID(renderRules, imageRules, rolloutRules, argocdRules, liveRules)

// byID indexes rule lists; it panics on a duplicate id, a programming error
// that every test run catches.
func byID(families ...[]Rule) map[string]Rule {
	m := map[string]Rule{}
	for _, fam := range families {
		for _, r := range fam {
			if _, dup := m[r.ID]; dup {
				panic("rules: duplicate rule id " + r.ID)
			}
			m[r.ID] = r
		}
	}
	return m
}

// All returns every rule, sorted by family order then id.
func All() []Rule {
	out := make([]Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		fi, fj := familyOrder[out[i].Family], familyOrder[out[j].Family]
		if fi != fj {
			return fi < fj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

var familyOrder = map[string]int{"render": 0, "images": 1, "rollouts": 2, "argocd": 3, "live": 4}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	r, ok := registry[id]
	return r, ok
}

// IDs returns every registered rule id.
func IDs() []string {
	all := All()
	ids := make([]string, len(all))
	for i, r := range all {
		ids[i] = r.ID
	}
	return ids
}
