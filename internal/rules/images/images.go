package images

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// workloadImage is one image of one object, parsed.
type workloadImage struct {
	obj *yaml.RNode
	c   images.Container
	ref images.Ref
	ok  bool
}

// eachImage calls fn for every image of every object that is applied. The
// images are found and parsed once per run (images.Collect, the walk pin
// also uses), however many rules ask.
func eachImage(c *rules.Context, fn func(w workloadImage)) {
	for _, w := range rules.Memo(c, "images", func() []workloadImage { return findImages(c) }) {
		fn(w)
	}
}

func findImages(c *rules.Context) []workloadImage {
	all := images.Collect(c.Resources, images.ConfiguredPaths(c.Config), manifest.IsLocalConfig)
	out := make([]workloadImage, len(all))
	for i, im := range all {
		out[i] = workloadImage{obj: im.Obj, c: im.Container, ref: im.Ref, ok: im.Valid}
	}
	return out
}

func imageFinding(rule string, sev finding.Severity, w workloadImage, format string, args ...any) finding.Finding {
	f := manifest.Finding(rule, sev, w.obj, w.c.Path, w.c.Image, format, args...)
	src := manifest.ImageSetBy(w.obj, w.ref.Repository())
	if src.File != "" {
		f.File = &finding.File{Path: src.File, Line: src.Line}
	}
	if src.File != "" || src.By != "" {
		f.Message += fmt.Sprintf(" (image set by %s)", src.Describe())
	}
	return f
}
