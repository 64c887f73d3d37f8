package schema

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// lookupBefore is lookup as it was before its outcome was kept per
// apiVersion and kind (every step taken again for each object): the
// oracle of TestLookupIsLookupBefore.
func (v *Validator) lookupBefore(base Result, render map[string]*crdKind) (*compiled, []Result) {
	gv, kind := base.APIVersion, base.Kind
	group, version := "", gv
	if i := strings.Index(gv, "/"); i >= 0 {
		group, version = gv[:i], gv[i+1:]
	}
	note := func(rule, reason string) []Result {
		r := base
		r.Rule, r.Reason = rule, reason
		return []Result{r}
	}
	if k := render[group+"/"+kind]; k != nil && !v.builtinGroup(group) {
		return v.custom(base, k, version, note)
	}
	if !v.builtinGroup(group) {
		k, err := v.sharedCRD(group + "/" + kind)
		if err != nil {
			return nil, note(RuleSchema, err.Error())
		}
		if k != nil {
			return v.custom(base, k, version, note)
		}
	}
	target := minorOf(v.version)
	lc := v.lifecycle[gv][kind]
	if lc.Removed != "" && minorOf(lc.Removed) <= target {
		reason := fmt.Sprintf("%s %s is no longer served since Kubernetes %s", gv, kind, lc.Removed)
		if lc.Replacement != "" {
			reason += "; use " + lc.Replacement
		}
		return nil, note(RuleAPIRemoved, reason)
	}
	info, ok := v.kube.Kinds[gv][kind]
	if !ok {
		if v.ignored(group, kind) {
			return nil, nil
		}
		gk := strings.TrimPrefix(group+"/"+kind, "/")
		return nil, note(RuleSchemaUnknown, fmt.Sprintf("no schema for kind %q in version %q (Kubernetes %s, built-in CRDs, --crd, or a CRD in the render): give its CRD with --crd FILE|DIR, or allow it unvalidated with --ignore-missing-schema %s (schema.ignoreMissing in the trusted config)", kind, gv, v.version, gk))
	}
	var notes []Result
	if lc.Deprecated != "" && minorOf(lc.Deprecated) <= target {
		reason := fmt.Sprintf("%s %s is deprecated in v%s+", gv, kind, lc.Deprecated)
		if lc.Removed != "" {
			reason += fmt.Sprintf(", unavailable in v%s+", lc.Removed)
		}
		if lc.Replacement != "" {
			reason += "; use " + lc.Replacement
		}
		notes = note(RuleAPIDeprecated, reason)
	}
	c, err := v.compileBuiltin(gv, kind, info)
	if err != nil {
		return nil, append(notes, note(RuleSchema, err.Error())...)
	}
	return c, notes
}

// lookupCRDs are CRDs for --crd and for the render: a served and a
// deprecated version, an unserved one, one of a built-in group (which a
// built-in kind keeps), one that replaces a built-in CRD's kind.
const lookupCRDs = certCRDAndCert + `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1beta1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta2, served: true, storage: false, deprecated: true, deprecationWarning: "use v1", schema: {openAPIV3Schema: {type: object}}}
  - {name: v1alpha1, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: deployments.apps}
spec:
  group: apps
  names: {kind: Deployment, plural: deployments}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  names: {kind: Rollout, plural: rollouts}
  scope: Namespaced
  versions:
  - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

// lookupKinds is every apiVersion and kind lookup can be asked about: the
// embedded Kubernetes kinds and lifecycle entries (removed and deprecated
// APIs), the built-in CRDs' kinds, the CRDs above, the corpus's and the
// bench render's objects, and unknown ones (ignored or not).
func lookupKinds(t *testing.T, v *Validator) []lookupKey {
	seen := map[lookupKey]bool{}
	add := func(gv, kind string) { seen[lookupKey{gv, kind}] = true }
	for gv, kinds := range v.kube.Kinds {
		for kind := range kinds {
			add(gv, kind)
		}
	}
	for gv, kinds := range v.lifecycle {
		for kind := range kinds {
			add(gv, kind)
		}
	}
	for gk := range v.crdRaw {
		group, kind, _ := strings.Cut(gk, "/")
		for _, version := range []string{"v1", "v1alpha1", "v1beta1", "v1beta2", "v2"} {
			add(group+"/"+version, kind)
		}
	}
	objects := func(data []byte) {
		objs, err := kio.FromBytes(data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.YNode().Kind == yaml.MappingNode {
				add(o.GetApiVersion(), o.GetKind())
			}
		}
	}
	testutil.CorpusYAML(t, func(_ string, data []byte) { objects(data) })
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 100, Images: 10, Registry: "ghcr.io"}); err != nil {
		t.Fatal(err)
	}
	objects(buf.Bytes())
	for _, gv := range []string{"example.com/v1", "example.com/v1beta1", "example.com/v1beta2", "example.com/v1alpha1", "example.com/v9", "apps/v1", "v1", "apps/v9", "", "nodomain", "a/b/c"} {
		for _, kind := range []string{"Widget", "Gadget", "Deployment", "Thing", "Ignored", "Globbed", ""} {
			add(gv, kind)
		}
	}
	keys := make([]lookupKey, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].apiVersion != keys[j].apiVersion {
			return keys[i].apiVersion < keys[j].apiVersion
		}
		return keys[i].kind < keys[j].kind
	})
	return keys
}

// TestLookupIsLookupBefore: for every Kubernetes version, with --crd CRDs,
// ignored kinds and globs, with and without CRDs in the render, lookup
// gives what it gave before its outcome was kept (the same compiled
// schema, the same notes), on the first object of a kind and on the next.
func TestLookupIsLookupBefore(t *testing.T) {
	crds, err := kio.FromBytes([]byte(lookupCRDs))
	if err != nil {
		t.Fatal(err)
	}
	render := map[string]*crdKind{}
	for _, n := range crds {
		obj, _ := toUnstructured(n.YNode())
		group, kind, k, err := parseCRD(obj.(map[string]any), "render")
		if err != nil {
			t.Fatal(err)
		}
		render[group+"/"+kind] = k
	}
	var compared, notes int
	for i, version := range Versions() {
		opts := Options{KubernetesVersion: version, IgnoreMissing: []string{"example.com/Ignored", "*/Glob*"}}
		if i%2 == 0 {
			opts.CRDs = crds // --crd on every other version
		}
		v, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		keys := lookupKinds(t, v)
		for _, r := range []map[string]*crdKind{nil, render} {
			for _, key := range keys {
				for n := range 2 {
					base := Result{Index: n, APIVersion: key.apiVersion, Kind: key.kind, Name: fmt.Sprint("o", n), Namespace: "ns"}
					var gotC, wantC *compiled
					var gotNotes, wantNotes []Result
					if n == 0 { // the kind's first object: lookup finds it first
						gotC, gotNotes = v.lookup(base, r)
						wantC, wantNotes = v.lookupBefore(base, r)
					} else {
						wantC, wantNotes = v.lookupBefore(base, r)
						gotC, gotNotes = v.lookup(base, r)
					}
					if gotC != wantC || !reflect.DeepEqual(gotNotes, wantNotes) {
						t.Errorf("Kubernetes %s, %s %s (render CRDs %v, object %d):\nlookup       %p %+v\nlookupBefore %p %+v", version, key.apiVersion, key.kind, r != nil, n, gotC, gotNotes, wantC, wantNotes)
					}
					compared++
					notes += len(wantNotes)
				}
			}
		}
	}
	if compared < 1000 || notes < 100 {
		t.Fatalf("compared %d lookups with %d notes; want more", compared, notes)
	}
	t.Logf("compared %d lookups, %d notes", compared, notes)
}

// BenchmarkLookup: lookup per object of the bench render's kinds, kept
// (lookup) and found again each time (lookupBefore).
func BenchmarkLookup(b *testing.B) {
	v, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	var bases []Result
	for _, k := range [][2]string{{"v1", "ConfigMap"}, {"batch/v1", "CronJob"}, {"apps/v1", "DaemonSet"}, {"apps/v1", "Deployment"}, {"batch/v1", "Job"}, {"argoproj.io/v1alpha1", "Rollout"}, {"v1", "Service"}, {"apps/v1", "StatefulSet"}} {
		bases = append(bases, Result{APIVersion: k[0], Kind: k[1], Name: "web", Namespace: "shop"})
	}
	for _, bc := range []struct {
		name   string
		lookup func(Result, map[string]*crdKind) (*compiled, []Result)
	}{{"kept", v.lookup}, {"before", v.lookupBefore}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if c, _ := bc.lookup(bases[i%len(bases)], nil); c == nil {
					b.Fatal("no schema")
				}
			}
		})
	}
}
