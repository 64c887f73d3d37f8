package all_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	renderrules "github.com/kubectl-gate/kubectl-gate/internal/rules/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestReadsHold holds every rule to what it says it reads (rules.Rule
// PerObject and Reads), which the streamed check relies on, on the vendored
// corpus and on every rule's mutants of it (which make rules fire): a
// PerObject rule gives on a render what it gives on its objects one at a
// time, end to end; any other rule gives the same findings when every
// object of a kind it does not read is released (manifest.Release). Renders
// the streamed check leaves to a whole check (a CRD, an ImageLock) are left
// out, as are mutants that need what it never has (a resolver, policies).
func TestReadsHold(t *testing.T) {
	cfg := config.Default()
	for _, r := range all.Rules() {
		if rules.Runs(cfg, r) && !r.PerObject && r.Reads == nil {
			t.Errorf("%s says neither PerObject nor Reads: the streamed check keeps every object whole for it", r.ID)
		}
	}
	checked, fired := 0, map[string]int{}
	testutil.CorpusYAML(t, func(path string, data []byte) {
		if _, err := stream.Parse(data, path); err != nil {
			return
		}
		renders := [][]*yaml.RNode{parse(t, data, path)}
		for _, r := range all.Rules() {
			for _, m := range r.Mutants {
				if m.NeedsApps {
					continue
				}
				s := &rules.Subject{Resources: parse(t, data, path), Config: cfg}
				if m.Apply(s) && s.Config == cfg {
					renders = append(renders, s.Resources)
				}
			}
		}
		for _, render := range renders {
			if wholeOnly(render) {
				continue
			}
			checked++
			for _, r := range all.Rules() {
				if !rules.Runs(cfg, r) {
					continue
				}
				want := runRule(r, copies(render), cfg, nil, nil)
				fired[r.ID] += len(want)
				var got []finding.Finding
				if r.PerObject {
					for _, o := range copies(render) {
						got = append(got, runRule(r, []*yaml.RNode{o}, cfg, nil, nil)...)
					}
				} else {
					objs := copies(render)
					released := map[*yaml.Node]manifest.ContentKey{}
					packed := map[*yaml.Node]*rules.PackedObject{}
					for _, o := range objs {
						if reads(r.Reads, o) || manifest.IsLocalConfig(o) {
							continue
						}
						if reads(r.Follows, o) {
							p, ok := manifest.Pack(o)
							if !ok {
								continue
							}
							packed[o.YNode()] = &rules.PackedObject{Packed: p}
						}
						released[o.YNode()] = manifest.ContentKeyOf(o)
						manifest.Release(o)
					}
					if !renderrules.Comparable(&rules.Context{Resources: objs, Released: released}) {
						continue // the streamed check checks it whole
					}
					got = runRule(r, objs, cfg, released, packed)
				}
				if w, g := asJSON(t, want), asJSON(t, got); w != g {
					t.Errorf("%s on %s: whole render\n%s\nas the streamed check runs it\n%s", r.ID, path, w, g)
				}
			}
		}
	})
	if checked < 100 {
		t.Fatalf("only %d renders checked: the corpus is not read", checked)
	}
	for _, id := range []string{"image-digest", "schema", "api-validation", "rollout-canary-pause", "rollout-invalid-spec", "rollout-canary-services", "render-duplicate"} {
		if fired[id] == 0 {
			t.Errorf("%s never fired on the corpus and its mutants: the test does not see it", id)
		}
	}
}

// wholeOnly reports a render the streamed check leaves to a whole check.
func wholeOnly(render []*yaml.RNode) bool {
	for _, r := range render {
		if k := manifest.Kind(r); k == "CustomResourceDefinition" || k == "ImageLock" {
			return true
		}
	}
	return false
}

// reads reports whether o is of a kind (or Kind/name) of kinds.
func reads(kinds []string, o *yaml.RNode) bool {
	for _, k := range kinds {
		kind, name, named := strings.Cut(k, "/")
		if kind == manifest.Kind(o) && (!named || name == manifest.Name(o)) {
			return true
		}
	}
	return false
}

func runRule(r rules.Rule, objs []*yaml.RNode, cfg *config.Spec, released map[*yaml.Node]manifest.ContentKey, packed map[*yaml.Node]*rules.PackedObject) []finding.Finding {
	c := &rules.Context{Resources: objs, Config: cfg, Counted: manifest.Count(objs), Released: released, Packed: packed}
	return rules.Run(c, []rules.Rule{r})
}

func parse(t *testing.T, data []byte, path string) []*yaml.RNode {
	t.Helper()
	objs, err := stream.Parse(data, path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func copies(objs []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(objs))
	for i, o := range objs {
		out[i] = o.Copy()
	}
	return out
}

func asJSON(t *testing.T, fs []finding.Finding) string {
	t.Helper()
	b, err := json.MarshalIndent(fs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
