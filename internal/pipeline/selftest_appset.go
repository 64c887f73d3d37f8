package pipeline

import (
	"context"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/appset"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
)

// elsewhere is the namespace selftest's mutants move things to.
const elsewhere = "gate-selftest-elsewhere"

// mutants is selftest's ApplicationSet mutant (issue 13 §5): one list
// element of the ApplicationSet gets a wrong value for the param that
// becomes the destination namespace, the ApplicationSet is expanded again,
// and argocd-destination-namespace must stop the Application it now
// generates, naming the element. The sources' renders are reused: the
// mutant is only tried on an element whose change leaves every source as
// it was.
func (g *ApplicationSet) mutants(ctx context.Context, s *session, u *Unit, opts gate.Options, _ gate.Deps, failOnWarning bool) ([]selftest.Row, error) {
	row := selftest.Row{Rule: "argocd-destination-namespace", Mutant: "an ApplicationSet list element with a wrong namespace", Got: "n/a"}
	apps, el, ok := mutateElement(g.set, u.Resources, appset.Options{Root: s.in.AppsRoot})
	if !ok {
		return []selftest.Row{row}, nil
	}
	row.Mutant += " (" + el + ")"
	rep, err := gate.Run(ctx, apps, opts, gate.Deps{Version: s.o.Version})
	if err != nil {
		return nil, fmt.Errorf("running the ApplicationSet mutant: %w", err)
	}
	selftest.Judge(&row, rep.Findings, failOnWarning)
	return []selftest.Row{row}, nil
}

// mutateElement tries each string value of each list element of the
// ApplicationSet's top-level generators: the first whose change moves a
// generated Application's destination namespace, and nothing else of its
// sources, gives the mutant's Applications.
func mutateElement(set *yaml.RNode, generated []*yaml.RNode, opts appset.Options) ([]*yaml.RNode, string, bool) {
	gens, _ := set.Pipe(yaml.Lookup("spec", "generators"))
	if gens == nil {
		return nil, "", false
	}
	elems, _ := gens.Elements()
	for i := range elems {
		list, _ := elems[i].Pipe(yaml.Lookup("list", "elements"))
		if list == nil {
			continue
		}
		items, _ := list.Elements()
		for j, item := range items {
			for _, key := range fieldNames(item) {
				if apps, ok := tryValue(set, i, j, key, generated, opts); ok {
					return apps, fmt.Sprintf("spec.generators[%d].list.elements[%d].%s", i, j, key), true
				}
			}
		}
	}
	return nil, "", false
}

func fieldNames(n *yaml.RNode) []string {
	names, _ := n.Fields()
	return names
}

// tryValue sets one element value to elsewhere and expands the copy.
func tryValue(set *yaml.RNode, i, j int, key string, generated []*yaml.RNode, opts appset.Options) ([]*yaml.RNode, bool) {
	mut := set.Copy()
	v, err := mut.Pipe(yaml.Lookup("spec", "generators", fmt.Sprint(i), "list", "elements", fmt.Sprint(j), key))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode || v.YNode().Tag == yaml.NodeTagInt {
		return nil, false
	}
	v.YNode().Value = elsewhere
	out, err := appset.Expand(mut, opts)
	if err != nil || len(out) != len(generated) {
		return nil, false
	}
	apps := make([]*yaml.RNode, len(out))
	moved := false
	for k, gen := range out {
		before := generated[k]
		if gen.App.GetName() != before.GetName() || sources(gen.App) != sources(before) {
			return nil, false
		}
		moved = moved || yamlString(gen.App, "spec", "destination", "namespace") != yamlString(before, "spec", "destination", "namespace")
		apps[k] = gen.App
	}
	return apps, moved
}

// sources is an Application's sources as text, to compare.
func sources(app *yaml.RNode) string {
	var out string
	for _, f := range []string{"source", "sources"} {
		if n, _ := app.Pipe(yaml.Lookup("spec", f)); n != nil {
			out += n.MustString()
		}
	}
	return out
}
