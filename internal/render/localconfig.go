package render

import (
	"bytes"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Local-config policies. kustomize hands objects annotated
// config.kubernetes.io/local-config: "true" to its KRM functions and drops
// them from its output, so a team may keep its ValidatingAdmissionPolicies
// and bindings in a Component that is never deployed, for the gate
// function's spec.policiesFromRender. The in-process render keeps them too:
// while kustomize reads a resource file, such an admission object's
// annotation is renamed to keptLocal (kustomize then carries it through
// every transformer like any object), and after the build the objects
// still carrying it get their annotation back and go to
// Result.LocalConfig, never to Resources.

// An ImageLock (kubectl gate pin --write-lock) kept in the render as local
// config is kept the same way: the image-lock rule holds the render to it.

// keptLocal stands in for the local-config annotation during a build.
const keptLocal = "kubectl-gate.dev/kept-local-config"

// admissionGroup is the API group of ValidatingAdmissionPolicies and bindings.
const admissionGroup = "admissionregistration.k8s.io/"

// keepLocalPolicies renames the local-config annotation of the admission
// objects in a resource file; data is returned as it is when it holds none.
func keepLocalPolicies(data []byte) []byte {
	if !bytes.Contains(data, []byte(manifest.AnnoLocalConfig)) ||
		(!bytes.Contains(data, []byte(admissionGroup)) && !bytes.Contains(data, []byte(imageLockKind))) {
		return data
	}
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return data // kustomize reports the parse error
	}
	changed := false
	for _, n := range nodes {
		if !keptKind(n) || yamlpath.Annotation(n.YNode(), manifest.AnnoLocalConfig) != "true" {
			continue
		}
		if n.PipeE(yaml.ClearAnnotation(manifest.AnnoLocalConfig)) == nil && n.PipeE(yaml.SetAnnotation(keptLocal, "true")) == nil {
			changed = true
		}
	}
	if !changed {
		return data
	}
	out, err := kio.StringAll(nodes)
	if err != nil {
		return data
	}
	return []byte(out)
}

// imageLockKind is the kind of the gate's image lock.
const imageLockKind = "ImageLock"

// keptKind reports whether a local-config object is one the gate reads:
// an admission policy or binding, or an ImageLock.
func keptKind(n *yaml.RNode) bool {
	return strings.HasPrefix(n.GetApiVersion(), admissionGroup) ||
		(n.GetApiVersion() == manifest.ConfigAPIVersion && n.GetKind() == imageLockKind)
}

// splitLocal takes the objects keepLocalPolicies marked out of a render and
// gives them their local-config annotation back.
func splitLocal(nodes []*yaml.RNode) (resources, local []*yaml.RNode) {
	resources = nodes[:0:0]
	for _, n := range nodes {
		if yamlpath.Annotation(n.YNode(), keptLocal) != "true" {
			resources = append(resources, n)
			continue
		}
		_ = n.PipeE(yaml.ClearAnnotation(keptLocal))
		_ = n.PipeE(yaml.SetAnnotation(manifest.AnnoLocalConfig, "true"))
		local = append(local, n)
	}
	return resources, local
}
