package argo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// Summary is what the rules of an Application's (or a Flux object's) unit
// read of one of its sources' renders, kept when the render itself is
// released once checked (the pipeline checks a run unit by unit): whether
// it renders anything, its namespaced objects by namespace (what
// argocd-destination-namespace and flux-target-namespace judge), and the
// identity and content hash of every object it deploys (app-shared-object).
// It never holds the objects.
type Summary struct {
	// Count is how many objects count as rendered (manifest.Count).
	Count int
	// ByNS groups the namespaced objects by the namespace they render into
	// (ByNamespace with no skip); FluxByNS leaves Flux's own objects out
	// (flux-target-namespace).
	ByNS, FluxByNS map[string]NSGroup
	// objects are what EachOwned walks (Objects): every object but local
	// config and Argo CD's own, in render order, packed into one buffer
	// without pointers. An estate's summaries are kept until its last unit
	// is checked; packed, the collector never walks them.
	objects []byte
	n       int
}

// NSGroup is the namespaced objects of a render in one namespace: how many,
// and manifest.Sample of them for messages.
type NSGroup struct {
	N      int
	Sample string
}

// ObjectID is one object of a render as app-shared-object needs it: its
// identity before the destination namespace is applied, whether its kind is
// cluster-scoped (the render's CRDs say for custom kinds), and the hash of
// its content as applied (Body).
type ObjectID struct {
	Group, Kind, Namespace, Name string
	ClusterScoped                bool
	Hash                         [sha256.Size]byte
}

// Summarise reads what Summary keeps of a render.
func Summarise(resources []*yaml.RNode) *Summary {
	s := &Summary{Count: manifest.Count(resources), ByNS: groups(ByNamespace(resources, nil)), FluxByNS: groups(ByNamespace(resources, IsFluxObject))}
	scope := NewScopeOf(resources)
	var buf []byte
	for _, obj := range resources {
		if manifest.IsLocalConfig(obj) || IsArgoConfig(obj) {
			continue
		}
		buf = appendObjectID(buf, ObjectID{Group: apiGroup(obj), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			ClusterScoped: scope.Cluster(manifest.Kind(obj)), Hash: sha256.Sum256([]byte(Body(obj)))})
		s.n++
	}
	s.objects = bytes.Clone(buf) // no slack kept
	return s
}

// Len is how many objects the render deploys (Objects).
func (s *Summary) Len() int { return s.n }

// Objects calls f on every object the render deploys, in render order:
// every object but local config and Argo CD's own.
func (s *Summary) Objects(f func(ObjectID)) {
	for b := s.objects; len(b) > 0; {
		var id ObjectID
		id.Group, b = nextString(b)
		id.Kind, b = nextString(b)
		id.Namespace, b = nextString(b)
		id.Name, b = nextString(b)
		id.ClusterScoped = b[0] == 1
		copy(id.Hash[:], b[1:1+sha256.Size])
		b = b[1+sha256.Size:]
		f(id)
	}
}

// appendObjectID packs id: each string as its length and bytes, then the
// scope and the hash.
func appendObjectID(b []byte, id ObjectID) []byte {
	for _, s := range []string{id.Group, id.Kind, id.Namespace, id.Name} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	scope := byte(0)
	if id.ClusterScoped {
		scope = 1
	}
	b = append(b, scope)
	return append(b, id.Hash[:]...)
}

// nextString unpacks a string appendObjectID packed.
func nextString(b []byte) (string, []byte) {
	n, w := binary.Uvarint(b)
	return string(b[w : w+int(n)]), b[w+int(n):]
}

func groups(byNS map[string][]*yaml.RNode) map[string]NSGroup {
	out := make(map[string]NSGroup, len(byNS))
	for ns, objs := range byNS {
		out[ns] = NSGroup{N: len(objs), Sample: manifest.Sample(objs)}
	}
	return out
}

// IsFluxObject reports Flux's own objects (any *.toolkit.fluxcd.io kind):
// a Kustomization that renders other Kustomizations puts them in
// flux-system on purpose, so flux-target-namespace leaves them out.
func IsFluxObject(r *yaml.RNode) bool {
	return strings.Contains(manifest.APIVersion(r), ".toolkit.fluxcd.io/")
}

// apiGroup is the API group of an object's apiVersion ("" for the core
// group).
func apiGroup(obj *yaml.RNode) string {
	v := obj.GetApiVersion()
	group, _, found := strings.Cut(v, "/")
	if !found {
		return ""
	}
	return group
}

// Count is how many objects of the source's render count as rendered
// (manifest.Count), from its Summary when the render was released.
func (a AppSource) Count() int {
	if a.Summary != nil {
		return a.Summary.Count
	}
	return manifest.Count(a.Resources)
}

// Namespaces groups the namespaced objects of the source's render by the
// namespace they render into (ByNamespace), leaving out Flux's own objects
// when flux is set; from its Summary when the render was released.
func (a AppSource) Namespaces(flux bool) map[string]NSGroup {
	if a.Summary != nil {
		if flux {
			return a.Summary.FluxByNS
		}
		return a.Summary.ByNS
	}
	var skip func(*yaml.RNode) bool
	if flux {
		skip = IsFluxObject
	}
	return groups(ByNamespace(a.Resources, skip))
}
