package argo

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// Owned is one object as one owner (an Argo CD Application, a Flux
// Kustomization or HelmRelease) renders it for one cluster.
type Owned struct {
	// Key is the object's identity on its cluster: cluster, group, kind,
	// namespace (the destination's applied) and name.
	Key string
	// Owner names the owner ("Application argocd/web", "Flux Kustomization
	// flux-system/apps"); Source its source ("spec.source deploy/web").
	Owner, Source string
	// Cluster is the destination cluster; What names the object
	// ("ConfigMap/settings (ns shop)").
	Cluster, What string
	// App is the owner object and Obj the rendered object (nil when the
	// render was released: its Summary's hash stands for it).
	App, Obj *yaml.RNode

	hash [sha256.Size]byte
}

// id is one owner's source's occurrence of an object.
func (o Owned) id() string { return o.Key + "\x00" + o.Owner + "\x00" + o.Source }

// Hash is the hash of the object's content as applied (Body).
func (o Owned) Hash() [sha256.Size]byte {
	if o.Obj != nil {
		return sha256.Sum256([]byte(Body(o.Obj)))
	}
	return o.hash
}

// EachOwned calls f on every object the renders of apps deploy, in order:
// the renders that failed or were not rendered are left out, and so are
// local config and Argo CD's own objects. A released render is walked
// through its Summary.
func EachOwned(apps []AppSource, f func(Owned)) {
	for _, as := range apps {
		if !as.Judged() || (len(as.Resources) == 0 && (as.Summary == nil || as.Summary.Len() == 0)) {
			continue
		}
		cluster, ns := destination(as.App)
		o := Owned{Owner: ownerName(as.App), Source: sourceName(as), Cluster: cluster, App: as.App}
		each := func(id ObjectID) {
			objNS := id.Namespace
			if objNS == "" && !id.ClusterScoped {
				objNS = ns
			}
			o.Key = strings.Join([]string{cluster, id.Group, id.Kind, objNS, id.Name}, "\x00")
			o.What = id.Kind + "/" + id.Name
			if objNS != "" {
				o.What += " (ns " + objNS + ")"
			}
			f(o)
		}
		if as.Summary != nil {
			as.Summary.Objects(func(id ObjectID) {
				o.hash = id.Hash
				each(id)
			})
			continue
		}
		scope := NewScopeOf(as.Resources) // once per render: per object it is quadratic
		for _, obj := range as.Resources {
			if manifest.IsLocalConfig(obj) || IsArgoConfig(obj) {
				continue
			}
			o.Obj = obj
			each(ObjectID{Group: apiGroup(obj), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), ClusterScoped: scope.Cluster(manifest.Kind(obj))})
		}
	}
}

// Ownership indexes which owners render which objects across every unit of
// a run (app-shared-object): two Applications in different renders (two -k
// inputs, two children of an app of apps) deploy to the same cluster all
// the same. It keeps, for the objects two owners render, their identities
// and a hash of their content; never the renders themselves.
type Ownership struct {
	first map[string]firstOwner // object key → its first owner, over all units
	at    map[string]occurrence // owner's source's object → where it first occurs
}

type firstOwner struct {
	owner, source string
	hash          [sha256.Size]byte
}

type occurrence struct {
	unit int
	hash [sha256.Size]byte
}

// NewOwnership indexes the renders of every unit's apps (units[i] is unit
// i's gate.Options.Apps). Only objects that two owners render are kept.
func NewOwnership(units [][]AppSource) *Ownership {
	// First pass: which objects have two owners, with nothing but their keys.
	firstBy := map[string]string{}
	shared := map[string]bool{}
	for _, apps := range units {
		EachOwned(apps, func(o Owned) {
			prev, ok := firstBy[o.Key]
			switch {
			case !ok:
				firstBy[o.Key] = o.Owner
			case prev != o.Owner:
				shared[o.Key] = true
			}
		})
	}
	clear(firstBy)
	// Second pass: their owners and content hashes.
	own := &Ownership{first: map[string]firstOwner{}, at: map[string]occurrence{}}
	for i, apps := range units {
		EachOwned(apps, func(o Owned) {
			if !shared[o.Key] {
				return
			}
			h := o.Hash()
			if _, ok := own.first[o.Key]; !ok {
				own.first[o.Key] = firstOwner{owner: o.Owner, source: o.Source, hash: h}
			}
			if _, ok := own.at[o.id()]; !ok {
				own.at[o.id()] = occurrence{unit: i, hash: h}
			}
		})
	}
	return own
}

// Shared is what app-shared-object reports about o in unit: the first
// owner of the same object when it is another owner and unit is where o
// first occurs (each pair is reported once, in the unit of the later
// owner), and whether both render it identically.
func (own *Ownership) Shared(unit int, o Owned) (firstOwner, firstSource string, identical, ok bool) {
	if own == nil {
		return "", "", false, false
	}
	f, found := own.first[o.Key]
	if !found || f.owner == o.Owner {
		return "", "", false, false
	}
	at, found := own.at[o.id()]
	if !found || at.unit != unit {
		return "", "", false, false
	}
	return f.owner, f.source, at.hash == f.hash, true
}

// destination returns an owner's cluster and default namespace: an
// Application's spec.destination server or name and namespace; a Flux
// object's spec.kubeConfig secret (else the cluster it runs in) and
// targetNamespace (else its own namespace).
func destination(app *yaml.RNode) (cluster, namespace string) {
	if IsApplication(app) {
		cluster = manifest.Str(app, "spec.destination.server")
		if cluster == "" {
			cluster = manifest.Str(app, "spec.destination.name")
		}
		if cluster == "https://kubernetes.default.svc" || cluster == "in-cluster" {
			cluster = "in-cluster"
		}
		return cluster, manifest.Str(app, "spec.destination.namespace")
	}
	cluster = "in-cluster"
	if s := manifest.Str(app, "spec.kubeConfig.secretRef.name"); s != "" {
		cluster = "kubeConfig " + app.GetNamespace() + "/" + s
	}
	namespace = manifest.Str(app, "spec.targetNamespace")
	if namespace == "" {
		namespace = app.GetNamespace()
	}
	return cluster, namespace
}

func ownerName(app *yaml.RNode) string {
	kind := app.GetKind()
	if !IsApplication(app) {
		kind = "Flux " + kind
	}
	return kind + " " + AppName(app)
}

func sourceName(as AppSource) string {
	if as.Index >= 0 {
		return fmt.Sprintf("spec.sources[%d] %s", as.Index, as.Path)
	}
	if IsApplication(as.App) {
		return "spec.source " + as.Path
	}
	return as.Path
}

// Body is the object as the cluster receives it, in a canonical form two
// renders of one object compare by (app-shared-object): its values as
// decoded (key order, quoting and flow or block style do not count; a
// mapping key's value null is no key), without the annotations a build
// adds to say where it came from (kustomize's config.kubernetes.io/*,
// alpha.config.kubernetes.io/* and internal.config.kubernetes.io/*: its
// origin and transformations name each overlay's own files; the gate's
// kubectl-gate.dev/*), without metadata.namespace (the object's key holds
// the namespace it lands in: written, set by a kustomize namespace: or the
// destination's applied, it is the same object), and without
// metadata.annotations or labels left empty. An object that does not
// decode (a duplicate key) is its text.
func Body(obj *yaml.RNode) string {
	var v any
	if err := obj.YNode().Decode(&v); err != nil {
		return "\x00text\x00" + obj.MustString()
	}
	if m, ok := v.(map[string]any); ok {
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "namespace")
			// Annotations written as a list (a schema error) hold no key
			// to clear; they are compared as written.
			if annos, ok := md["annotations"].(map[string]any); ok {
				for k := range annos {
					if buildAnnotation(k) {
						delete(annos, k)
					}
				}
			}
			for _, k := range []string{"annotations", "labels"} {
				if x, ok := md[k].(map[string]any); ok && len(x) == 0 {
					delete(md, k)
				}
			}
		}
	}
	var b strings.Builder
	canonical(&b, v)
	return b.String()
}

// buildAnnotation reports the annotations a build adds to say where an
// object came from: kustomize's (origin, transformations, the reader's
// path and index) and the gate's own.
func buildAnnotation(k string) bool {
	for _, p := range []string{"config.kubernetes.io/", "alpha.config.kubernetes.io/", "internal.config.kubernetes.io/", "kubectl-gate.dev/"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// canonical writes v, a decoded YAML value, as JSON with its mappings'
// keys sorted and their null values left out. Numbers are written as JSON
// writes them (1 and 1.0 are one number on the wire); a key that is not a
// string is written in its canonical form.
func canonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k, x := range v {
			if x != nil {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, k)
			b.WriteByte(':')
			canonical(b, v[k])
		}
		b.WriteByte('}')
	case map[any]any:
		type kv struct {
			k string
			v any
		}
		var kvs []kv
		for k, x := range v {
			if x == nil {
				continue
			}
			var kb strings.Builder
			canonical(&kb, k)
			kvs = append(kvs, kv{kb.String(), x})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
		b.WriteByte('{')
		for i, e := range kvs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(e.k)
			b.WriteByte(':')
			canonical(b, e.v)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, x)
		}
		b.WriteByte(']')
	default:
		j, err := json.Marshal(v)
		if err != nil { // a float that JSON cannot hold (.inf, .nan)
			j = []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
		}
		b.Write(j)
	}
}
