package images

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// PodSpecPath warns when a configured pod spec path or image field matches
// nothing: the pod specs or images it was meant to add are never read.
var PodSpecPath = rules.Rule{
	ID: "image-podspec-path", Default: finding.SeverityWarning, Family: "images",
	Doc:      "a configured images.podSpecPaths or images.fields (--image-field) entry matches nothing in any object of its kind that the render holds (a typo, or a list written without [])",
	Outage:   "a pod spec the gate was told to read is never read, and its images pass unseen",
	Fix:      "correct the images.podSpecPaths entry: the kind and a path that exists in those objects, with [] after each list",
	Mutation: "point a configured pod spec path at a key the objects lack",
	Reads:    []string{},
	Check:    checkPodSpecPaths,
}

func checkPodSpecPaths(c *rules.Context) []finding.Finding {
	extra := images.ConfiguredPaths(c.Config)
	if len(extra) == 0 {
		return nil
	}
	var applied []*yaml.RNode
	for _, r := range c.Resources {
		if !manifest.IsLocalConfig(r) {
			applied = append(applied, r)
		}
	}
	var out []finding.Finding
	for _, p := range images.Unmatched(applied, extra) {
		if p.Field {
			out = append(out, finding.Finding{Rule: "image-podspec-path", Severity: finding.SeverityWarning,
				Field:   &finding.Field{Path: "spec.images.fields", CurrentValue: p.Kind + " " + p.Path},
				Message: fmt.Sprintf("fields entry {kind: %s, path: %s} matches no string field in the render's %s objects: the image it names is not read (write a list as key[], e.g. spec.engines[].image)", p.Kind, p.Path, p.Kind)})
			continue
		}
		out = append(out, finding.Finding{Rule: "image-podspec-path", Severity: finding.SeverityWarning,
			Field:   &finding.Field{Path: "spec.images.podSpecPaths", CurrentValue: p.Kind + " " + p.Path},
			Message: fmt.Sprintf("podSpecPaths entry {kind: %s, path: %s} matches nothing in the render's %s objects: their containers at that path are not read (write a list as key[], e.g. spec.templates[].template.spec)", p.Kind, p.Path, p.Kind)})
	}
	return out
}
