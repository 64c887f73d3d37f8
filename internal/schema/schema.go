package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// Rule ids of the results.
const (
	RuleSchema        = "schema"
	RuleSchemaUnknown = "schema-unknown"
	RuleAPIRemoved    = "api-removed"
	RuleAPIDeprecated = "api-deprecated"
	// RuleAPIValidation: a built-in object that passed the schema but that
	// its kind's hand-written validation in the API server rejects.
	RuleAPIValidation = "api-validation"
)

// Options configures a Validator.
type Options struct {
	// KubernetesVersion is the target cluster's version ("1.36", "v1.36.3");
	// empty means the newest embedded.
	KubernetesVersion string
	// CRDs are extra CustomResourceDefinitions (from --crd files); the
	// render's own CRDs are picked up by Validate.
	CRDs []*yaml.RNode
	// IgnoreMissing lists "group/Kind" (core kinds as "Kind") whose missing
	// schema is allowed; their objects are not validated.
	IgnoreMissing []string
	// SkipAPIValidation leaves out the API server's hand-written validation
	// of built-in kinds (RuleAPIValidation): the api-validation rule is off.
	SkipAPIValidation bool
}

// Result is one problem with one object.
type Result struct {
	Rule       string // RuleSchema, RuleSchemaUnknown, RuleAPIRemoved, RuleAPIDeprecated, RuleAPIValidation
	Index      int    // position of the object in the input
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// GenerateName is metadata.generateName when the object has no name.
	GenerateName string
	Field        string // "spec.template.spec.containers[0].name"; empty for the whole object
	Value        string // the offending value, when there is one
	Reason       string // the API server's words
}

func (r Result) String() string {
	where := r.Field
	if where == "" {
		where = "(object)"
	}
	return fmt.Sprintf("%s %s %s/%s %s: %s", r.Rule, r.APIVersion, r.Kind, r.Name, where, r.Reason)
}

// Validator checks rendered objects against the schemas of one Kubernetes
// version, the built-in CRDs and the CRDs given in Options.
type Validator struct {
	version   string
	kube      *kubeData
	builtins  *builtinSchemas
	lifecycle map[string]map[string]lifecycle
	crds      map[string]*crdKind // key "group/Kind", parsed on first use
	crdRaw    map[string]rawCRD
	ignore    map[string]bool
	// ignoreGlobs are IgnoreMissing entries with a glob (ignored).
	ignoreGlobs []string
	// noAPIValidation is Options.SkipAPIValidation.
	noAPIValidation bool

	mu       sync.Mutex
	compiled map[string]*compiled // key "apiVersion/Kind" plus source

	// lookups holds lookup's outcome per apiVersion and kind outside the
	// render's CRDs (lookupKey → *lazyOutcome).
	lookups sync.Map
}

// New loads the embedded data for the target version and the CRDs.
func New(opts Options) (*Validator, error) {
	version, err := resolveVersion(opts.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	kube, err := loadKube(version)
	if err != nil {
		return nil, err
	}
	lc, err := loadLifecycle()
	if err != nil {
		return nil, err
	}
	v := &Validator{
		version:   version,
		kube:      kube,
		builtins:  &builtinSchemas{raw: kube.Schemas, cache: map[string]*structuralschema.Structural{}},
		lifecycle: lc,
		crds:      map[string]*crdKind{},
		crdRaw:    map[string]rawCRD{},
		ignore:    map[string]bool{},
		compiled:  map[string]*compiled{},

		noAPIValidation: opts.SkipAPIValidation,
	}
	for _, gk := range opts.IgnoreMissing {
		gk = strings.TrimPrefix(gk, "/")
		if strings.ContainsAny(gk, "*?[") {
			v.ignoreGlobs = append(v.ignoreGlobs, gk)
			continue
		}
		v.ignore[gk] = true
	}
	if err := v.loadBuiltinCRDs(); err != nil {
		return nil, err
	}
	for _, n := range opts.CRDs {
		obj, _ := toUnstructured(n.YNode())
		m, ok := obj.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reading CRD: not a mapping")
		}
		if err := v.addCRD(m, "--crd "+n.GetName()); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// ignored reports whether IgnoreMissing allows group/kind without a schema:
// an exact "group/Kind" ("Kind" for the core group), or a pattern whose
// group is a glob ("*.istio.io/VirtualService", "*.example.com/*").
func (v *Validator) ignored(group, kind string) bool {
	if v.ignore[strings.TrimPrefix(group+"/"+kind, "/")] {
		return true
	}
	for _, g := range v.ignoreGlobs {
		gp, kp, ok := strings.Cut(g, "/")
		if !ok {
			gp, kp = "", g
		}
		if gm, err := path.Match(gp, group); err == nil && gm {
			if km, err := path.Match(kp, kind); err == nil && km {
				return true
			}
		}
	}
	return false
}

// Version is the target Kubernetes minor ("1.37").
func (v *Validator) Version() string { return v.version }

func (v *Validator) loadBuiltinCRDs() error {
	raws, err := builtinCRDRaw()
	if err != nil {
		return err
	}
	maps.Copy(v.crdRaw, raws)
	return nil
}

// builtinCRDRaw is the embedded CRDs by "group/Kind", decompressed once
// for every Validator of the process (the bytes are only read).
var builtinCRDRaw = sync.OnceValues(func() (map[string]rawCRD, error) {
	out := map[string]rawCRD{}
	for _, file := range builtinCRDFiles() {
		raw, err := readZstd(file)
		if err != nil {
			return nil, err
		}
		project := strings.TrimSuffix(strings.TrimPrefix(file, "crds-"), ".tsv.zst")
		for _, line := range bytes.Split(raw, []byte("\n")) {
			key, crd, ok := bytes.Cut(line, []byte("\t"))
			if !ok {
				continue
			}
			out[string(key)] = rawCRD{json: crd, source: "built-in (" + project + ")"}
		}
	}
	return out, nil
})

// rawCRD is a CRD not parsed yet: parsing all built-in CRDs up front costs
// seconds (Argo CD's ApplicationSet alone is 1.5 MB of schema).
type rawCRD struct {
	obj    map[string]any
	json   []byte
	source string
}

func (v *Validator) addCRD(obj map[string]any, source string) error {
	spec, _ := obj["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, kind := str(spec["group"]), str(names["kind"])
	if group == "" || kind == "" {
		return fmt.Errorf("reading CRD from %s: spec.group and spec.names.kind are required", source)
	}
	delete(v.crds, group+"/"+kind)
	v.crdRaw[group+"/"+kind] = rawCRD{obj: obj, source: source}
	return nil
}

// crd returns the parsed CRD for "group/Kind", or nil.
func (v *Validator) crd(gk string) (*crdKind, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.crds[gk]; ok {
		return k, nil
	}
	raw, ok := v.crdRaw[gk]
	if !ok {
		return nil, nil
	}
	obj := raw.obj
	if obj == nil {
		if err := json.Unmarshal(raw.json, &obj); err != nil {
			return nil, fmt.Errorf("decoding CRD %s from %s: %w", gk, raw.source, err)
		}
	}
	_, _, k, err := parseCRD(obj, raw.source)
	if err != nil {
		return nil, err
	}
	v.crds[gk] = k
	return k, nil
}

// LoadCRDFiles reads every CustomResourceDefinition in the given YAML files
// and directories (recursively, *.yaml, *.yml and *.json). A CRD the API
// server would refuse to create (CheckCRD) is an error naming its file.
func LoadCRDFiles(paths []string) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, p := range paths {
		err := filepath.WalkDir(p, func(file string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if file != p && !strings.HasSuffix(file, ".yaml") && !strings.HasSuffix(file, ".yml") && !strings.HasSuffix(file, ".json") {
				return nil
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(raw)), OmitReaderAnnotations: true}).Read()
			if err != nil {
				return fmt.Errorf("parsing %s: %w", file, err)
			}
			for _, n := range nodes {
				if n.GetKind() == "CustomResourceDefinition" {
					if err := CheckCRD(n); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
					out = append(out, n)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading CRDs from %s: %w", p, err)
		}
	}
	return out, nil
}

// Validate checks every object. CRDs in the input describe the kinds of the
// input (they take precedence over the built-in and --crd ones). An error
// means the objects could not be checked at all.
func (v *Validator) Validate(ctx context.Context, objs []*yaml.RNode) ([]Result, error) {
	// The render's CRDs first: every object may need them. Each is
	// converted on its own here, since validating an object changes it.
	render := map[string]*crdKind{}
	for _, n := range objs {
		// kyaml's GetKind panics on a node that is not a mapping ("[0]",
		// fuzz); such a document is reported below as no object.
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(n.GetApiVersion(), "apiextensions.k8s.io/") {
			continue
		}
		obj, _ := toUnstructured(n.YNode())
		if m, ok := obj.(map[string]any); ok {
			group, kind, k, err := parseCRD(m, "render")
			if err == nil {
				render[group+"/"+kind] = k
			}
		}
	}
	// Objects are independent: validate them on every core, results kept in
	// input order. Each worker converts its object and drops it after
	// validation, so the JSON form of the whole render is never held at once.
	per := make([][]Result, len(objs))
	var cut atomic.Bool
	workers.Each(len(objs), func(i int) bool {
		if ctx.Err() != nil {
			cut.Store(true)
			return false
		}
		obj, dups := toUnstructured(objs[i].YNode())
		m, _ := obj.(map[string]any)
		per[i] = v.validateOne(ctx, i, m, dups, render)
		return true
	})
	if cut.Load() {
		return nil, fmt.Errorf("validating: %w", ctx.Err())
	}
	var out []Result
	for _, rs := range per {
		out = append(out, rs...)
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func sortedResults(rs []Result) []Result {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Index != rs[j].Index {
			return rs[i].Index < rs[j].Index
		}
		return rs[i].Field < rs[j].Field
	})
	return rs
}

// compiled is what validating one kind needs, built once.
type compiled struct {
	structural      *structuralschema.Structural
	openapi         validation.SchemaCreateValidator
	cel             *cel.Validator
	namespaced      bool
	custom          bool
	preserveUnknown bool
	nameFn          apimachineryvalidation.ValidateNameFunc
	// dropStatus: a create through a status subresource ignores .status
	// (after strict decoding has looked at its field names).
	dropStatus bool
	// Which of the create path's schema walks can find or change anything
	// in this schema (see walks): the others are skipped, same outcome.
	walks walks
}

// walks records which schema-driven passes of the create path have work
// in a schema, and over which part of it. Each pass below acts only at
// nodes of one kind, and walks the whole object along the schema to find
// them, copying each property's schema (a large struct) and allocating a
// field path per field:
//
//   - defaulting acts only at properties with a default (and at null
//     items and additional properties, which dropNulls leaves none of);
//   - objectmeta.Coerce and objectmeta.Validate (below the root) only at
//     x-kubernetes-embedded-resource nodes;
//   - listtype.ValidateListSetsAndMaps only at x-kubernetes-list-type set
//     or map nodes.
//
// defaults and listSetsMaps are the schema cut down to the paths that lead
// to such nodes (nil: none), which the passes then walk instead: the same
// outcome, since the object's other fields have nothing they act on.
//
// defaulter is the defaulting walk compiled from defaults (defaults.go).
type walks struct {
	defaults, listSetsMaps *structuralschema.Structural
	defaulter              *defaulter
	embedded               bool
}

func walksOf(s *structuralschema.Structural) walks {
	w := walks{
		defaults:     cutTo(s, func(n *structuralschema.Structural) bool { return n.Default.Object != nil }, nil),
		listSetsMaps: cutTo(s, isListSetOrMap, isListSetOrMap),
		embedded:     anyNode(s, func(n *structuralschema.Structural) bool { return n.XEmbeddedResource }),
	}
	w.defaulter = compileDefaults(w.defaults)
	return w
}

func isListSetOrMap(n *structuralschema.Structural) bool {
	return n.XListType != nil && (*n.XListType == "set" || *n.XListType == "map")
}

// cutTo returns a copy of s with only the properties, items and additional
// properties below which has holds at some node, or nil when it holds
// nowhere. A node where whole holds is kept with all below it. When the
// additional properties are kept, every property is kept too (as a shell
// without children if nothing below it is), so that no property name is
// taken for an additional one.
func cutTo(s *structuralschema.Structural, has, whole func(*structuralschema.Structural) bool) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if whole != nil && whole(s) {
		return s
	}
	out := *s
	out.Properties, out.Items, out.AdditionalProperties = nil, nil, nil
	keep := has(s)
	if items := cutTo(s.Items, has, whole); items != nil {
		out.Items, keep = items, true
	}
	if s.AdditionalProperties != nil {
		if ap := cutTo(s.AdditionalProperties.Structural, has, whole); ap != nil {
			out.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: ap, Bool: s.AdditionalProperties.Bool}
			keep = true
		}
	}
	for name, p := range s.Properties {
		cut := cutTo(&p, has, whole)
		if cut == nil && out.AdditionalProperties != nil {
			shell := p
			shell.Properties, shell.Items, shell.AdditionalProperties = nil, nil, nil
			cut = &shell
		}
		if cut == nil {
			continue
		}
		if out.Properties == nil {
			out.Properties = map[string]structuralschema.Structural{}
		}
		out.Properties[name] = *cut
		keep = true
	}
	if !keep {
		return nil
	}
	return &out
}

// DeprecatedKinds lists the built-in "apiVersion Kind" pairs the given
// Kubernetes version (empty: newest embedded) still serves but has
// deprecated, from the embedded lifecycle data.
func DeprecatedKinds(version string) ([]string, error) {
	version, err := resolveVersion(version)
	if err != nil {
		return nil, err
	}
	kube, err := loadKube(version)
	if err != nil {
		return nil, err
	}
	lc, err := loadLifecycle()
	if err != nil {
		return nil, err
	}
	target := minorOf(version)
	var out []string
	for gv, kinds := range lc {
		for kind, l := range kinds {
			if _, served := kube.Kinds[gv][kind]; !served || l.Deprecated == "" || minorOf(l.Deprecated) > target {
				continue
			}
			if l.Removed != "" && minorOf(l.Removed) <= target {
				continue
			}
			out = append(out, gv+" "+kind)
		}
	}
	sort.Strings(out)
	return out, nil
}
