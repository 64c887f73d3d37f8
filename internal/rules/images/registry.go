package images

import (
	"slices"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Registry fires on images from registries outside images.allowedRegistries.
var Registry = rules.Rule{
	ID: "image-registry", Default: finding.SeverityError, Family: "images",
	Doc:       "images.allowedRegistries is set and an image comes from another registry",
	Outage:    "an image from an unvetted registry reaches production",
	Fix:       "take the image from an allowed registry (or a mirror of it), or add its registry to images.allowedRegistries in the trusted config",
	Mutation:  "move an image to another registry",
	PerObject: true,
	Check:     checkImageRegistry,
	Mutants: []rules.Mutant{
		{Name: "move an image to another registry", Apply: rules.OnResources(func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
			if len(cfg.Images.AllowedRegistries) == 0 {
				return nil, false
			}
			return onFirstImage(rs, cfg, func(r images.Ref) string {
				return "registry.invalid.example/" + r.Original
			})
		})},
	},
}

func checkImageRegistry(c *rules.Context) []finding.Finding {
	allowed := c.Config.Images.AllowedRegistries
	if len(allowed) == 0 {
		return nil
	}
	norm := make([]string, len(allowed))
	for i, a := range allowed {
		norm[i] = images.NormalizeRegistry(a)
	}
	var out []finding.Finding
	eachImage(c, func(w workloadImage) {
		if w.ok && !slices.Contains(norm, images.NormalizeRegistry(w.ref.Registry)) {
			out = append(out, imageFinding("image-registry", finding.SeverityError, w, "%s: registry %s is not in allowedRegistries %v", w.c.Describe(), w.ref.Registry, allowed))
		}
	})
	return out
}
