package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// validateOne checks one object: which schema applies (or why none does),
// then the API server's create path for it.
func (v *Validator) validateOne(ctx context.Context, index int, obj map[string]any, dups []string, render map[string]*crdKind) []Result {
	base := Result{Index: index, APIVersion: str(obj["apiVersion"]), Kind: str(obj["kind"])}
	if md, ok := obj["metadata"].(map[string]any); ok {
		base.Name, base.Namespace = str(md["name"]), str(md["namespace"])
		if base.Name == "" {
			base.GenerateName = str(md["generateName"])
		}
	}
	if obj == nil || base.APIVersion == "" || base.Kind == "" {
		r := base
		r.Rule, r.Reason = RuleSchema, "Object 'apiVersion' and 'kind' are required"
		return []Result{r}
	}
	dropReaderAnnotations(obj)
	var out []Result
	for _, d := range dups {
		r := base
		r.Rule, r.Field = RuleSchema, d
		r.Reason = fmt.Sprintf("strict decoding error: duplicate field %q", d[strings.LastIndex(d, ".")+1:])
		out = append(out, r)
	}
	c, notes := v.lookup(base, render)
	out = append(out, notes...)
	if c == nil {
		return out
	}
	errs := c.check(ctx, obj)
	out = append(out, fieldResults(base, RuleSchema, errs)...)
	if len(errs) == 0 && !c.custom && !v.noAPIValidation {
		out = append(out, apiValidation(base, obj)...)
	}
	return out
}

// fieldResults turns field errors into results of one rule.
func fieldResults(base Result, rule string, errs field.ErrorList) []Result {
	var out []Result
	for _, e := range errs {
		r := base
		r.Rule, r.Field, r.Reason = rule, e.Field, e.ErrorBody()
		if e.Type == field.ErrorTypeNotSupported && e.BadValue == (field.OmitValueType{}) {
			r.Reason = e.Detail // unknown field: the decoder's words
		}
		if e.Type != field.ErrorTypeRequired && e.Type != field.ErrorTypeForbidden && e.BadValue != nil && e.BadValue != (field.OmitValueType{}) {
			r.Value = fmt.Sprint(e.BadValue)
		}
		out = append(out, r)
	}
	return out
}

// apiValidation is the API server's next step for a built-in object that
// passed the schema: its kind's hand-written validation (apivalidation;
// for a CustomResourceDefinition, the apiextensions server's, which
// compiles its CEL rules and checks their cost).
// A decoding error there (a quantity like "1Gb") is the whole object's.
func apiValidation(base Result, obj map[string]any) []Result {
	verdict, ok := apivalidation.Validate(obj)
	if !ok {
		verdict, ok = apivalidation.ValidateCRD(obj)
	}
	if !ok || verdict == nil {
		return nil
	}
	if verdict.Decode != "" {
		r := base
		r.Rule, r.Reason = RuleAPIValidation, verdict.Decode
		return []Result{r}
	}
	return fieldResults(base, RuleAPIValidation, verdict.Fields)
}

// check runs the API server's create path on a copy-free object it owns:
// strict decoding (unknown fields), metadata coercion, null pruning,
// defaulting, then OpenAPI, metadata, list-type and CEL validation.
func (c *compiled) check(ctx context.Context, obj map[string]any) field.ErrorList {
	s := c.structural
	var errs field.ErrorList
	md, _ := obj["metadata"].(map[string]any)
	if md != nil {
		if c.namespaced && str(md["namespace"]) == "" {
			md["namespace"] = "default" // what kubectl sends without -n
		}
		if !c.namespaced {
			delete(md, "namespace") // the registry clears it for cluster-scoped kinds
		}
	}
	dropNulls(obj)
	meta, _, unknown, err := getObjectMeta(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(metadataErrorPath(md, err), nil, err.Error())}
	}
	if !c.preserveUnknown {
		unknown = append(unknown, pruneUnknown(obj, s)...)
		// The API server's next step, PruneNonNullableNullsWithoutDefaults,
		// deletes null map values; dropNulls above left none.
	}
	if c.walks.embedded {
		cerr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, s, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if cerr != nil {
			errs = append(errs, cerr)
		}
		unknown = append(unknown, paths...)
	}
	for _, p := range unknown {
		errs = append(errs, &field.Error{Type: field.ErrorTypeNotSupported, Field: p, BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("strict decoding error: unknown field %q", p)})
	}
	if meta != nil {
		generateName(meta)
		if err := setObjectMeta(obj, meta); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata"), nil, err.Error()))
		}
		nameFn := c.nameFn
		if nameFn == nil {
			nameFn = apimachineryvalidation.NameIsDNSSubdomain
		}
		errs = append(errs, apimachineryvalidation.ValidateObjectMeta(meta, c.namespaced, nameFn, field.NewPath("metadata"))...)
	}
	if c.dropStatus {
		delete(obj, "status")
	}
	c.walks.defaulter.apply(obj)
	errs = append(errs, validateOpenAPI(c.openapi, obj)...)
	if c.walks.embedded {
		errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, s, false)...)
	}
	if c.walks.listSetsMaps != nil {
		errs = append(errs, validateListSetsAndMaps(c.walks.listSetsMaps, obj)...)
	}
	if c.cel != nil {
		celErrs, _ := c.cel.Validate(ctx, nil, s, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

// readerAnnotations are what the gate's reader writes on every object it
// reads (stream.annotate): the file and the index in it. The API server
// never receives them (kubectl apply -f sends the file; kustomize and
// kio writers drop them), so they are not validated as the object's own:
// two keys on every object made ValidateAnnotations, run twice an object
// (ObjectMeta here, api-validation), the costliest part of its metadata's
// check on the bench renders.
var readerAnnotations = [...]string{kioutil.PathAnnotation, kioutil.IndexAnnotation}

// dropReaderAnnotations removes the reader's annotations from an object's
// JSON form (an object with annotations of its own keeps them).
func dropReaderAnnotations(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	for _, k := range readerAnnotations {
		delete(a, k)
	}
}

// lookup finds the schema for an object's apiVersion and kind, or says why
// there is none (schema-unknown, api-removed); deprecations come as notes
// beside a schema.
func (v *Validator) lookup(base Result, render map[string]*crdKind) (*compiled, []Result) {
	if len(render) > 0 {
		group, version := splitAPIVersion(base.APIVersion)
		if k := render[group+"/"+base.Kind]; k != nil && !v.builtinGroup(group) {
			return v.custom(base, k, version, noteOn(base))
		}
	}
	// Everything else depends on the apiVersion and kind alone (and on what
	// New loaded): found once per Validator, then one map read per object.
	key := lookupKey{base.APIVersion, base.Kind}
	// Resolved once per key, even when the workers meet the first objects
	// of a kind at the same time: compiling a kind's schema (~5 ms) twice
	// was wasted work at the start of every run.
	o, ok := v.lookups.Load(key)
	if !ok {
		o, _ = v.lookups.LoadOrStore(key, &lazyOutcome{})
	}
	lazy := o.(*lazyOutcome)
	lazy.once.Do(func() { lazy.outcome = v.resolveKind(key) })
	return lazy.outcome.results(base)
}

// lazyOutcome is a lookupOutcome resolved on first use.
type lazyOutcome struct {
	once    sync.Once
	outcome *lookupOutcome
}

// lookupKey is an object's apiVersion and kind.
type lookupKey struct{ apiVersion, kind string }

// lookupOutcome is what lookup says about every object of one apiVersion
// and kind outside the render's CRDs: the schema (nil if none) and the
// notes, each a rule and a reason, given with each object's identity.
type lookupOutcome struct {
	c     *compiled
	notes []Result
}

func (o *lookupOutcome) results(base Result) (*compiled, []Result) {
	if len(o.notes) == 0 {
		return o.c, nil
	}
	out := make([]Result, len(o.notes))
	for i, n := range o.notes {
		out[i] = base
		out[i].Rule, out[i].Reason = n.Rule, n.Reason
	}
	return o.c, out
}

func splitAPIVersion(gv string) (group, version string) {
	if i := strings.Index(gv, "/"); i >= 0 {
		return gv[:i], gv[i+1:]
	}
	return "", gv
}

// noteOn makes lookup's notes (a rule and a reason) on one object.
func noteOn(base Result) func(rule, reason string) []Result {
	return func(rule, reason string) []Result {
		r := base
		r.Rule, r.Reason = rule, reason
		return []Result{r}
	}
}

// resolveKind finds the schema of an apiVersion and kind that no CRD of
// the render defines (a built-in CRD, --crd, a built-in kind), or says why
// there is none.
func (v *Validator) resolveKind(key lookupKey) *lookupOutcome {
	c, notes := v.resolveKindNotes(Result{APIVersion: key.apiVersion, Kind: key.kind})
	return &lookupOutcome{c: c, notes: notes}
}

func (v *Validator) resolveKindNotes(base Result) (*compiled, []Result) {
	gv, kind := base.APIVersion, base.Kind
	group, version := splitAPIVersion(gv)
	note := noteOn(base)
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

func (v *Validator) builtinGroup(group string) bool {
	if group == "" {
		return true
	}
	for gv := range v.kube.Kinds {
		if strings.HasPrefix(gv, group+"/") {
			return true
		}
	}
	return false
}

// unserved says that a CRD does not serve an object's version, which
// versions it serves, and, for a CRD the gate carries, how to check
// against the release the cluster runs.
func unserved(base Result, k *crdKind) string {
	var served []string
	for name, cv := range k.versions {
		if cv.served {
			served = append(served, name)
		}
	}
	slices.Sort(served)
	msg := fmt.Sprintf("no matches for kind %q in version %q (the CRD from %s does not serve it", base.Kind, base.APIVersion, k.source)
	if len(served) > 0 {
		msg += "; it serves " + strings.Join(served, ", ")
	}
	msg += ")"
	if strings.HasPrefix(k.source, "built-in") {
		msg += ": move the object to a served version, or, if the cluster runs an older release that still serves it, give that release's CRD with --crd (or schema.crds)"
	}
	return msg
}

func (v *Validator) custom(base Result, k *crdKind, version string, note func(rule, reason string) []Result) (*compiled, []Result) {
	cv := k.versions[version]
	if cv == nil || !cv.served {
		return nil, note(RuleSchema, unserved(base, k))
	}
	var notes []Result
	if cv.deprecated {
		w := cv.deprecationWarning
		if w == "" {
			w = fmt.Sprintf("%s %s is deprecated", base.APIVersion, base.Kind)
		}
		notes = note(RuleAPIDeprecated, w)
	}
	key := "crd:" + k.source + ":" + base.APIVersion + "/" + base.Kind
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.compiled[key]; ok {
		return c, notes
	}
	// A built-in CRD's kind is compiled once for the whole run (shared).
	shared.mu.Lock()
	defer shared.mu.Unlock()
	isShared := shared.kinds[k]
	if isShared {
		if c, ok := shared.compiled[key]; ok {
			v.compiled[key] = c
			return c, notes
		}
	}
	s := cv.structural
	if s == nil {
		s = &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	}
	ov, err := cv.openAPIValidator()
	if err != nil {
		return nil, append(notes, note(RuleSchema, err.Error())...)
	}
	c := &compiled{structural: s, openapi: ov, namespaced: k.namespaced, custom: true, preserveUnknown: cv.preserveUnknown, dropStatus: cv.statusSubresource, walks: walksOf(s)}
	if hasValidations(s) {
		c.cel = cel.NewValidator(s, true, celconfig.PerCallLimit)
	}
	v.compiled[key] = c
	if isShared {
		shared.compiled[key] = c
	}
	return c, notes
}

func (v *Validator) compileBuiltin(gv, kind string, info kindInfo) (*compiled, error) {
	// What a built-in kind compiles to depends on the Kubernetes version
	// alone: every unit of the run shares it (shared), compiled once. Kinds
	// compile at the same time on different cores: the first objects of a
	// render meet several kinds at once, and no lock is held while one
	// compiles.
	skey := "builtin:" + v.version + ":" + gv + "/" + kind
	shared.mu.Lock()
	e := shared.builtins[skey]
	if e == nil {
		e = &builtinOnce{}
		shared.builtins[skey] = e
	}
	shared.mu.Unlock()
	e.once.Do(func() {
		s, err := v.builtins.definition(info.Schema)
		if err != nil {
			e.err = err
			return
		}
		e.c = &compiled{structural: s, openapi: builtinValidator(s), namespaced: info.Namespaced, nameFn: builtinNameFn(gv, kind, minorOf(v.version)), walks: walksOf(s)}
	})
	return e.c, e.err
}

// builtinOnce is a built-in kind compiled once for the process.
type builtinOnce struct {
	once sync.Once
	c    *compiled
	err  error
}

// shared holds what validating needs that depends on the embedded data
// alone, for every Validator of the process: a run builds a Validator per
// unit (an estate of 2,000 Applications is 2,000 units), and compiling the
// same built-in schemas and CRDs for each cost ~60 ms a unit. A compiled
// schema is read-only once built (the workers of one Validate share it
// already). Kinds from --crd or from the render are never shared: two units
// may define the same kind differently.
var shared = struct {
	mu       sync.Mutex
	builtins map[string]*builtinOnce  // "builtin:VERSION:apiVersion/Kind"
	compiled map[string]*compiled     // "crd:SOURCE:apiVersion/Kind"
	crds     map[string]sharedCRDKind // "group/Kind" of a built-in CRD
	kinds    map[*crdKind]bool        // the kinds in crds
}{builtins: map[string]*builtinOnce{}, compiled: map[string]*compiled{}, crds: map[string]sharedCRDKind{}, kinds: map[*crdKind]bool{}}

type sharedCRDKind struct {
	kind *crdKind
	err  error
}

// sharedCRD is crd, with a built-in CRD (one that no --crd replaced)
// parsed once for the process.
func (v *Validator) sharedCRD(gk string) (*crdKind, error) {
	raw, ok := v.crdRaw[gk] // written by New only
	if !ok || raw.obj != nil {
		return v.crd(gk)
	}
	shared.mu.Lock()
	s, ok := shared.crds[gk]
	shared.mu.Unlock()
	if ok {
		return s.kind, s.err
	}
	k, err := v.crd(gk)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if s, ok := shared.crds[gk]; ok { // another worker parsed it meanwhile
		return s.kind, s.err
	}
	shared.crds[gk] = sharedCRDKind{kind: k, err: err}
	if k != nil {
		shared.kinds[k] = true
	}
	return k, err
}

// hasValidations reports whether any x-kubernetes-validations rule exists
// in the schema (the CEL validator is only built when one does).
func hasValidations(s *structuralschema.Structural) bool {
	return anyNode(s, func(n *structuralschema.Structural) bool { return len(n.XValidations) > 0 })
}

// anyNode reports whether f holds at any node of the schema.
func anyNode(s *structuralschema.Structural, f func(*structuralschema.Structural) bool) bool {
	if s == nil {
		return false
	}
	if f(s) || anyNode(s.Items, f) {
		return true
	}
	for _, p := range s.Properties {
		if anyNode(&p, f) {
			return true
		}
	}
	return s.AdditionalProperties != nil && anyNode(s.AdditionalProperties.Structural, f)
}

// dropNulls removes null-valued fields from maps: the API server accepts
// `creationTimestamp: null` and the like under strict validation (the
// agreement test shows it), and a null required field still fails as
// missing.
func dropNulls(x any) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if v == nil {
				delete(x, k)
				continue
			}
			dropNulls(v)
		}
	case []any:
		for _, v := range x {
			dropNulls(v)
		}
	}
}

// builtinNameFn is the name rule of a built-in kind: most use DNS
// subdomains, Services DNS-1035 labels (DNS labels from Kubernetes 1.36,
// where RelaxedServiceNameValidation is on by default), Namespaces DNS
// labels, and RBAC objects path segments ("system:controller:…").
func builtinNameFn(gv, kind string, minor int) apimachineryvalidation.ValidateNameFunc {
	switch {
	case strings.HasPrefix(gv, "rbac.authorization.k8s.io/"):
		return path.ValidatePathSegmentName
	case gv == "v1" && kind == "Service" && minor >= 36:
		return apimachineryvalidation.NameIsDNSLabel
	case gv == "v1" && kind == "Service":
		return apimachineryvalidation.NameIsDNS1035Label
	case gv == "v1" && kind == "Namespace":
		return apimachineryvalidation.ValidateNamespaceName
	}
	return apimachineryvalidation.NameIsDNSSubdomain
}

// generateName names an object that has only metadata.generateName the way
// the API server does before it validates a create (rest.BeforeCreate with
// names.SimpleNameGenerator: the prefix cut to 58 characters, then 5 random
// characters, here a fixed valid suffix). Argo CD creates its hook Jobs so.
func generateName(meta *metav1.ObjectMeta) {
	if meta.Name != "" || meta.GenerateName == "" {
		return
	}
	const keep = 63 - 5
	prefix := meta.GenerateName
	if len(prefix) > keep {
		prefix = prefix[:keep]
	}
	meta.Name = prefix + "x7k2q"
}

// metadataErrorPath is the field a metadata decoding error is about, for
// the line a finding names: the decoder's words name the map
// ("ObjectMeta.labels"), not the entry; of a map of strings the entry is
// the first that is none, in the order the decoder meets them (JSON's,
// keys sorted) — a label `tier: on` that kubectl reads as true
// (stream/yaml11.go). The message stays the decoder's.
func metadataErrorPath(md map[string]any, err error) *field.Path {
	p := field.NewPath("metadata")
	for _, which := range []string{"annotations", "labels"} {
		if !strings.Contains(err.Error(), "ObjectMeta."+which+" ") {
			continue
		}
		m, ok := md[which].(map[string]any)
		if !ok {
			return p.Child(which)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if _, ok := m[k].(string); !ok {
				return p.Child(which).Key(k)
			}
		}
		return p.Child(which)
	}
	return p
}
