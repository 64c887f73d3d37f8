package render

import (
	"encoding/json"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// relativize rewrites origin and transformer annotation paths, which
// kustomize writes relative to the top-level kustomization, to paths relative
// to where the user ran the gate ("overlays/prod/kustomization.yaml").
func relativize(resources []*yaml.RNode, abs, display string) { Relativize(resources, display) }

// Relativize is relativize for a render made elsewhere (a Flux
// Kustomization's): display is its top-level kustomization's directory as
// the user would write it.
func Relativize(resources []*yaml.RNode, display string) {
	for _, r := range resources {
		annos := r.GetAnnotations()
		if o := annos[manifest.AnnoOrigin]; o != "" {
			annos[manifest.AnnoOrigin] = rewritePaths(o, display, "path", "configuredIn")
		}
		if t := annos[manifest.AnnoTransformations]; t != "" {
			annos[manifest.AnnoTransformations] = rewritePaths(t, display, "configuredIn")
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

// annotateImageSources records, per image repository of a resource, the
// kustomization whose images: entry set it (the last one applied), as the
// manifest.AnnoImageSources annotation. kustomize's transformer annotation
// lists every ImageTagTransformer that ran over a resource, not which one
// changed which image, so the entries themselves are matched.
func annotateImageSources(resources []*yaml.RNode, kustImages map[string][]imageEntry) {
	if len(kustImages) == 0 {
		return
	}
	for _, r := range resources {
		sources := map[string]manifest.ImageSource{}
		for _, kust := range manifest.TransformersOf(r, "ImageTagTransformer") {
			for _, e := range kustImages[kust] {
				sources[e.repo] = e.src
			}
		}
		if len(sources) == 0 {
			continue
		}
		b, err := json.Marshal(sources)
		if err == nil {
			yamlpath.SetAnnotation(r.YNode(), manifest.AnnoImageSources, string(b))
		}
	}
}

// StripBuildAnnotations removes the annotations the gate switched on, so
// printed output equals what kustomize would print.
func StripBuildAnnotations(resources []*yaml.RNode) {
	for _, r := range resources {
		for _, a := range []string{manifest.AnnoOrigin, manifest.AnnoTransformations, manifest.AnnoImageSources, manifest.AnnoHelmSource} {
			yamlpath.DeleteAnnotation(r.YNode(), a)
		}
	}
}
