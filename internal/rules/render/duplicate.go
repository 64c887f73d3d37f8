package render

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// Duplicate fires when one object is in the render more than once.
var Duplicate = rules.Rule{
	ID: "render-duplicate", Default: finding.SeverityError, Family: "render",
	Doc:      "the same object (API group, kind, namespace, name) is in the render more than once: the copies are applied one after the other and the last wins, whichever it is; a cluster-scoped kind counts once whatever namespace each copy names; local config and objects named only by generateName do not count; across the run, an Argo CD Application (namespace, argocd when none is written, and name) that an ApplicationSet generates and another ApplicationSet generates too or an input or render writes",
	Outage:   "a second copy of an object (a duplicated manifest, two copies in one -f stream; the same object rendered by two Applications is app-shared-object) silently replaces the one that was checked and reviewed; the ApplicationSet controller refuses an Application another ApplicationSet owns and takes over a written one, so the two fight over what it deploys",
	Fix:      "keep one copy of the object: remove the duplicated manifest, or remove the second copy from the stream; give a generated Application a name no other ApplicationSet or written Application uses",
	Mutation: "add a second copy of an object with a changed label",
	Reads:    []string{},
	Check:    checkDuplicate,
	Mutants: []rules.Mutant{
		{Name: "add a second copy of an object with a changed label", Apply: rules.OnResources(func(res []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
			for _, r := range res {
				if manifest.IsLocalConfig(r) || manifest.Name(r) == "" {
					continue
				}
				dup := r.Copy()
				if err := dup.PipeE(yaml.SetLabel("kubectl-gate.dev/selftest", "copy")); err != nil {
					return nil, false
				}
				return append(res, dup), true
			}
			return nil, false
		})},
	},
}

// identity is what makes two objects the same object to the API server.
type identity struct {
	group, kind, namespace, name string
}

func checkDuplicate(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, d := range duplicatesOf(c) {
		prev, r := d[0], d[1]
		same := "an identical copy"
		if !identical(c, prev, r) {
			same = "a different copy: this one replaces it when applied"
		}
		where := ""
		if f := manifest.SourceFile(prev); f != nil && f.Path != "" {
			where = " (from " + f.Path + ")"
		}
		out = append(out, manifest.Finding("render-duplicate", finding.SeverityError, r, "", nil,
			"the render already holds this object%s; %s", where, same))
	}
	if c.AppNames != nil {
		for _, r := range c.Resources {
			if where, fight, ok := c.AppNames.Elsewhere(c.Unit, r); ok {
				out = append(out, manifest.Finding("render-duplicate", finding.SeverityError, r, "", nil,
					"Application %s is also %s: %s (argo-cd#15874)", argo.AppKey(r), where, fight))
			}
		}
	}
	return out
}

// Duplicates returns each object that repeats one before it in resources,
// with that first one (first, repeat), in order: local config and objects
// without a name do not count.
func Duplicates(resources []*yaml.RNode) [][2]*yaml.RNode {
	// Each object's identity is read on every core (the objects' nodes
	// are cold by the time a whole render is judged), then matched in
	// order; CustomResourceDefinitions say which custom kinds are
	// cluster-scoped.
	ids := make([]identity, len(resources))
	counted, crd := make([]bool, len(resources)), make([]bool, len(resources))
	workers.Ranges(len(resources), workers.RangeSize, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := resources[i]
			kind := manifest.Kind(r)
			crd[i] = kind == "CustomResourceDefinition"
			if manifest.IsLocalConfig(r) || manifest.Name(r) == "" {
				continue
			}
			group, _, _ := strings.Cut(manifest.APIVersion(r), "/")
			if !strings.Contains(manifest.APIVersion(r), "/") {
				group = ""
			}
			ids[i], counted[i] = identity{group, kind, manifest.Namespace(r), manifest.Name(r)}, true
		}
	})
	// The CRDs in render order: of two that name one kind, the later
	// decides, as when the render was read in one pass.
	var crds []*yaml.RNode
	for i, r := range resources {
		if crd[i] {
			crds = append(crds, r)
		}
	}
	scope := argo.NewScopeOf(crds)
	first := map[identity]*yaml.RNode{}
	var out [][2]*yaml.RNode
	for i, r := range resources {
		if !counted[i] {
			continue
		}
		id := ids[i]
		if scope.Cluster(id.kind) {
			// A cluster-scoped object's namespace is ignored by the API
			// server: copies in "two namespaces" are one object.
			id.namespace = ""
		}
		if prev, seen := first[id]; seen {
			out = append(out, [2]*yaml.RNode{prev, r})
			continue
		}
		first[id] = r
	}
	return out
}

// duplicatesOf is Duplicates of the context's render, found once for
// Comparable and the rule.
func duplicatesOf(c *rules.Context) [][2]*yaml.RNode {
	return rules.Memo(c, "render.duplicates", func() [][2]*yaml.RNode { return Duplicates(c.Resources) })
}

// Comparable reports whether every object repeated in the context's render
// can be told an identical or a different copy although the objects of
// c.Released are released: two whole copies always can, and so can copies
// with equal content keys; copies that differ in key, one of them
// released, may still print the same, which only their whole trees tell.
// The streamed check checks a render that is not comparable whole.
func Comparable(c *rules.Context) bool {
	released := c.Released
	for _, d := range duplicatesOf(c) {
		ka, ra := released[d[0].YNode()]
		kb, rb := released[d[1].YNode()]
		if !ra && !rb {
			continue
		}
		if !ra {
			ka = manifest.ContentKeyOf(d[0])
		}
		if !rb {
			kb = manifest.ContentKeyOf(d[1])
		}
		if ka != kb {
			return false
		}
	}
	return true
}

// identical reports whether two copies print the same. A copy the
// streamed check released is judged by its content key (Context.Released):
// that check reaches here only with a render that is Comparable.
func identical(c *rules.Context, a, b *yaml.RNode) bool {
	ka, ra := c.Released[a.YNode()]
	kb, rb := c.Released[b.YNode()]
	if !ra && !rb {
		return content(a) == content(b)
	}
	if !ra {
		ka = manifest.ContentKeyOf(a)
	}
	if !rb {
		kb = manifest.ContentKeyOf(b)
	}
	return ka == kb
}

// content is an object without the annotations readers and renderers add
// (file, index, origin, the gate's own), so two copies from different files
// compare by what the cluster would receive.
func content(r *yaml.RNode) string {
	cp := r.Copy()
	if md := cp.Field("metadata"); md != nil {
		if a := md.Value.Field("annotations"); a != nil {
			keys, _ := a.Value.Fields()
			for _, k := range keys {
				if strings.Contains(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.kubectl-gate.dev/") {
					_ = a.Value.PipeE(yaml.Clear(k))
				}
			}
		}
	}
	return cp.MustString()
}
