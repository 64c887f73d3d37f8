package render

import (
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// relativize rewrites origin and transformer annotation paths, which
// kustomize writes relative to the top-level kustomization, to paths relative
// to where the user ran the gate ("overlays/prod/kustomization.yaml").
func relativize(resources []*yaml.RNode, abs, display string) {
	for _, r := range resources {
		annos := r.GetAnnotations()
		if o := annos[rules.AnnoOrigin]; o != "" {
			annos[rules.AnnoOrigin] = rewritePaths(o, display, "path", "configuredIn")
		}
		if t := annos[rules.AnnoTransformations]; t != "" {
			annos[rules.AnnoTransformations] = rewritePaths(t, display, "configuredIn")
		}
		_ = r.SetAnnotations(annos)
	}
}

func rewritePaths(text, display string, keys ...string) string {
	n, err := yaml.Parse(text)
	if err != nil {
		return text
	}
	fix := func(m *yaml.RNode) {
		for _, k := range keys {
			if f := m.Field(k); f != nil && f.Value.YNode().Value != "" {
				f.Value.YNode().Value = filepath.ToSlash(filepath.Join(display, f.Value.YNode().Value))
			}
		}
	}
	if n.YNode().Kind == yaml.SequenceNode {
		_ = n.VisitElements(func(e *yaml.RNode) error { fix(e); return nil })
	} else {
		fix(n)
	}
	s, err := n.String()
	if err != nil {
		return text
	}
	return s
}

// StripBuildAnnotations removes the annotations the gate switched on, so
// printed output equals what kustomize would print.
func StripBuildAnnotations(resources []*yaml.RNode) {
	for _, r := range resources {
		_ = r.PipeE(yaml.ClearAnnotation(rules.AnnoOrigin))
		_ = r.PipeE(yaml.ClearAnnotation(rules.AnnoTransformations))
		clearEmptyAnnotations(r)
	}
}

func clearEmptyAnnotations(r *yaml.RNode) {
	if len(r.GetAnnotations()) == 0 {
		if md := r.Field("metadata"); md != nil {
			_ = md.Value.PipeE(yaml.Clear("annotations"))
		}
	}
}
