package images

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
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
// images are found and parsed once per run, however many rules ask.
func eachImage(c *rules.Context, fn func(w workloadImage)) {
	for _, w := range rules.Memo(c, "images", func() []workloadImage { return findImages(c) }) {
		fn(w)
	}
}

func findImages(c *rules.Context) []workloadImage {
	extra := PodSpecPaths(c.Config)
	parsed := map[string]images.Ref{}
	valid := map[string]bool{}
	var out []workloadImage
	for _, obj := range c.Resources {
		if manifest.IsLocalConfig(obj) {
			continue
		}
		for _, ct := range images.Find(obj, extra) {
			ref, seen := parsed[ct.Image]
			if !seen {
				ref, valid[ct.Image] = images.Parse(ct.Image)
				parsed[ct.Image] = ref
			}
			out = append(out, workloadImage{obj: obj, c: ct, ref: ref, ok: valid[ct.Image]})
		}
	}
	return out
}

// PodSpecPaths converts the configured extra pod spec paths.
func PodSpecPaths(s *config.Spec) []images.PodSpecPath {
	out := make([]images.PodSpecPath, len(s.Images.PodSpecPaths))
	for i, p := range s.Images.PodSpecPaths {
		out[i] = images.PodSpecPath{Kind: p.Kind, Path: p.Path}
	}
	return out
}

func imageFinding(rule string, sev finding.Severity, w workloadImage, format string, args ...any) finding.Finding {
	f := manifest.Finding(rule, sev, w.obj, w.c.Path, w.c.Image, format, args...)
	if kust := manifest.ImageSetBy(w.obj, w.ref.Repository()); kust != "" {
		f.File = &finding.File{Path: kust}
		f.Message += fmt.Sprintf(" (image set by %s `images:`)", kust)
	}
	return f
}
