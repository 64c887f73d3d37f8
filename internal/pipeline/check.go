package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	schemarule "github.com/kubectl-gate/kubectl-gate/internal/rules/schema"
	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// check runs the gate on one unit.
func (s *session) check(ctx context.Context, u *Unit, res *Result) (*finding.Report, error) {
	spec, err := s.spec(u)
	if err != nil {
		return nil, err
	}
	res.FailOnWarning = res.FailOnWarning || spec.FailOnWarning()
	if spec.Render.RemoteDenied() && len(u.remote) > 0 {
		// An in-tree Gate that denies remote resources is read after the
		// render that fetched them: the render is refused all the same.
		return nil, &render.RemoteError{Dir: u.Source.name(), Refs: u.remote}
	}
	// A Pin in the top-level kustomization is applied in process, as
	// kustomize would apply it (README "Use: the KRM function inside kustomize").
	pin := s.o.Pin || (u.found != nil && u.found.Kind == config.KindPin)
	if err := s.readLock(spec, u); err != nil {
		return nil, err
	}
	opts, deps, err := s.gateFor(ctx, u, spec, pin)
	if err != nil {
		return nil, err
	}
	opts.DropTag = s.o.DropTag
	if len(u.apps) > 0 {
		// Only a unit with Applications or Flux objects has objects to
		// compare across units; a source checked as soon as it rendered
		// (Options.ReleaseRenders) has none, and the run's index is built
		// once every render was.
		opts.Shared, opts.Unit = res.ownership(), u.seq
	}
	// The run's Applications (nil while the run is still planned: a
	// render checked as soon as it rendered holds none).
	opts.AppNames, opts.Unit = res.names, u.seq
	var unpinned []images.Image
	if pin && s.o.Lock != nil {
		unpinned = lockImages(u.checked(), spec)
	}
	var rep *finding.Report
	if st := u.streamed; st != nil {
		u.streamed = nil
		var ok bool
		if rep, ok = st.Finish(u.checked(), opts); !ok {
			// Copies of one object the released trees cannot compare,
			// or objects the streamed rules did not all see: whole.
			if u.Resources, err = u.read.Again(); err != nil {
				return nil, err
			}
		}
		u.read = nil
	}
	if rep == nil {
		if rep, err = gate.Run(ctx, u.checked(), opts, deps); err != nil {
			return nil, err
		}
	}
	if pin && s.o.Lock != nil {
		sigs, _ := deps.Signatures.(*signatureCheck)
		if err := recordLock(s.o.Lock, unpinned, lockImages(u.checked(), spec), spec.Images.Platform, sigs); err != nil {
			return nil, err
		}
	}
	u.Source.finish(u, rep)
	u.blame(rep.Findings)
	file := sync.OnceValue(func() string { return inputFile(u.Source) }) // a stat or more: once a unit
	for i := range rep.Findings {
		if rep.Findings[i].Input == "" {
			rep.Findings[i].Input = u.Source.input(rep.Findings[i])
		}
		if rep.Findings[i].InputFile == "" {
			rep.Findings[i].InputFile = file()
		}
	}
	u.unrev(rep.Findings)
	return rep, nil
}

// gateFor is the engine's options and parts for one unit: its CRDs, its
// policies, and a resolver when pinning or verifying digests.
func (s *session) gateFor(ctx context.Context, u *Unit, spec *config.Spec, pin bool) (gate.Options, gate.Deps, error) {
	opts := gate.Options{Config: spec, Pin: pin, Placement: u.placement, Apps: u.apps,
		Waivers: s.waivers, Owners: u.owners(), InTree: u.found}
	deps := gate.Deps{Version: s.o.Version}
	var err error
	if opts.CRDs, err = crdsFor(spec); err != nil {
		return opts, deps, err
	}
	if deps.Policy, err = s.policyChecker(spec, u); err != nil {
		return opts, deps, err
	}
	if pin || spec.Images.Digest == config.DigestVerify {
		if deps.Resolver, err = s.resolvers.For(ctx, spec, u.Resources); err != nil {
			return opts, deps, err
		}
		sigs, err := s.signaturesFor(spec, deps.Resolver)
		if err != nil {
			return opts, deps, err
		}
		if sigs != nil {
			deps.Signatures = sigs
		}
	}
	return opts, deps, nil
}

// spec picks a unit's config: Options.Config (else the defaults),
// tightened by the Gate/Pin of the top-level kustomization
// (config.Tighten); Options.Flags apply on top.
func (s *session) spec(u *Unit) (*config.Spec, error) {
	// The caller's config is the floor: a Gate/Pin inside the render,
	// which a pull request controls, may only tighten it unless the
	// caller's says spec.allowInTreeLoosening (SECURITY.md).
	trusted := *config.Default()
	if s.o.Config != nil {
		trusted = s.o.Config.Spec
	}
	spec := trusted
	if u.found != nil {
		spec = config.Tighten(trusted, u.found.Spec, ruleDefaults())
	}
	spec = cloneSpec(spec)
	if s.o.Flags != nil {
		if err := s.o.Flags(&spec); err != nil {
			return nil, err
		}
	}
	return &spec, nil
}

// cloneSpec copies the maps and slices flags append to.
func cloneSpec(s config.Spec) config.Spec {
	rulesCopy := make(map[string]string, len(s.Rules))
	for k, v := range s.Rules {
		rulesCopy[k] = v
	}
	s.Rules = rulesCopy
	s.Images.InsecureRegistries = append([]string(nil), s.Images.InsecureRegistries...)
	s.Schema.CRDs = append([]config.Entry(nil), s.Schema.CRDs...)
	s.Policies = append([]config.Entry(nil), s.Policies...)
	s.ArgoCD.Exclude = append([]string(nil), s.ArgoCD.Exclude...)
	s.ArgoCD.FromFlag = append([]string(nil), s.ArgoCD.FromFlag...)
	return s
}

// ruleDefaults maps every rule id to its default severity.
func ruleDefaults() map[string]string {
	out := map[string]string{}
	for _, r := range all.Rules() {
		out[r.ID] = string(r.Default)
	}
	return out
}

// crdsFor reads the CRDs that --crd and schema.crds name, and takes those
// written inline; a path that cannot be read is a usage error (exit 2),
// never a silently thinner schema set.
func crdsFor(spec *config.Spec) ([]*yaml.RNode, error) {
	if len(spec.Schema.CRDs) == 0 {
		return nil, nil
	}
	inline, err := spec.Schema.InlineCRDs()
	if err != nil {
		return nil, &config.UsageError{Where: "schema.crds", Err: err}
	}
	for _, n := range inline {
		if err := schema.CheckCRD(n); err != nil {
			return nil, &config.UsageError{Where: "schema.crds", Err: err}
		}
	}
	paths := config.Paths(spec.Schema.CRDs)
	if len(paths) == 0 {
		return inline, nil
	}
	crds, err := schema.LoadCRDFiles(paths)
	if err != nil {
		return nil, &config.UsageError{Where: "--crd / schema.crds", Err: err}
	}
	return append(crds, inline...), nil
}

// blame points each finding about a value at the file that set it: an
// overlay's patch rather than the base it overrode, with the line
// (render.Blame). Only kustomize renders carry the annotations it reads.
func (u *Unit) blame(fs []finding.Finding) {
	if !u.injected {
		return
	}
	var byRef map[string]*yaml.RNode
	object := func(ref *finding.ResourceRef) *yaml.RNode {
		if byRef == nil {
			byRef = make(map[string]*yaml.RNode, len(u.Resources))
			for _, r := range u.Resources {
				byRef[refKey(r.GetKind(), r.GetNamespace(), r.GetName())] = r
			}
		}
		return byRef[refKey(ref.Kind, ref.Namespace, ref.Name)]
	}
	defer u.placeLines(fs, object)
	blamer := render.NewBlamer()
	for i := range fs {
		f := &fs[i]
		value, ok := "", false
		if f.Field != nil {
			value, ok = f.Field.CurrentValue.(string)
		}
		if !ok || value == "" || f.ResourceRef == nil {
			continue
		}
		obj := object(f.ResourceRef)
		if obj == nil {
			continue
		}
		b := blamer.Blame(obj, f.Field.Path, value)
		switch {
		case b == nil:
		case f.File != nil && f.File.Path == b.Path:
			if f.File.Line == 0 { // a rule that placed the field itself knows better
				f.File.Line = b.Line
			}
		default:
			f.File = b
			if !strings.Contains(f.Message, b.Path) {
				f.Message += fmt.Sprintf(" (set by %s:%d)", b.Path, b.Line)
			}
		}
	}
}

// placeLines gives a finding that names its object's source file without a
// line (a rule's finding about a field of a kustomize render: the
// rendered object's lines are not the file's) the line of that field in
// the file kustomize's origin annotation names, as the schema rules place
// theirs (schemarule.Sources): SARIF put it at line 1 of the base.
func (u *Unit) placeLines(fs []finding.Finding, object func(*finding.ResourceRef) *yaml.RNode) {
	var src *schemarule.Sources
	for i := range fs {
		f := &fs[i]
		if f.File == nil || f.File.Line != 0 || f.File.Path == "" || f.ResourceRef == nil || f.ResourceRef.Kind == "" {
			continue
		}
		obj := object(f.ResourceRef)
		if obj == nil {
			continue
		}
		if src == nil {
			src = schemarule.NewSources()
		}
		path := ""
		if f.Field != nil {
			path = f.Field.Path
		}
		if p := src.Place(obj, path); p != nil && p.Path == f.File.Path && p.Line > 0 {
			f.File.Line = p.Line
		}
	}
}

func refKey(kind, ns, name string) string { return kind + "\x00" + ns + "\x00" + name }

// configSource says which configuration decides a unit's verdict, layer by
// layer: the caller's (Options.Config, else the built-in defaults), the
// in-tree Gate/Pin and whether it may only tighten (config.Tighten), and
// flags. Every report says it (a pull request's own Gate must not decide
// unseen).
func (s *session) configSource(u *Unit) []finding.ConfigSource {
	base := finding.ConfigSource{Source: finding.ConfigDefaults, Role: finding.RoleBase}
	if s.o.ConfigPath != "" {
		base = finding.ConfigSource{Source: finding.ConfigFile, Path: s.o.ConfigPath, Role: finding.RoleBase}
		if s.o.Config != nil {
			base.Sets = specFieldsSet(s.o.Config.Spec)
		}
	}
	out := []finding.ConfigSource{base}
	if f := u.found; f != nil {
		in := finding.ConfigSource{Source: finding.ConfigInTree, Kind: f.Kind, Name: f.Metadata.Name, Role: finding.RoleTighten, Sets: specFieldsSet(f.Spec)}
		if s.o.Config != nil && s.o.Config.Spec.AllowInTreeLoosening {
			in.Role = finding.RoleDecides
		}
		if img := f.Spec.Images; in.Role == finding.RoleTighten {
			for _, set := range []struct {
				field string
				set   bool
			}{{"images.mirrors", len(img.Mirrors) > 0}, {"images.insecureRegistries", len(img.InsecureRegistries) > 0}, {"images.platform", img.Platform != ""}} {
				if set.set {
					in.Ignored = append(in.Ignored, set.field)
				}
			}
		}
		out = append(out, in)
	}
	if s.o.FlagsDecide {
		out = append(out, finding.ConfigSource{Source: finding.ConfigFlags, Role: finding.RoleOverride})
	}
	return out
}

// specFieldsSet lists the fields of a config's spec whose value differs
// from the built-in defaults, one level into objects ("failOn",
// "images.allowedRegistries", "rules"), sorted.
func specFieldsSet(spec config.Spec) []string {
	have, def := specFields(spec), specFields(*config.Default())
	var out []string
	for k, v := range have {
		if v != def[k] && !(zeroJSON(v) && def[k] == "") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// specFields flattens a spec's JSON one level into objects (rules stays
// one field): path → the value's JSON.
func specFields(spec config.Spec) map[string]string {
	out := map[string]string{}
	b, err := json.Marshal(spec)
	if err != nil {
		return out
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return out
	}
	for k, v := range top {
		var obj map[string]json.RawMessage
		if k != "rules" && json.Unmarshal(v, &obj) == nil && obj != nil {
			for sub, sv := range obj {
				out[k+"."+sub] = string(sv)
			}
			continue
		}
		out[k] = string(v)
	}
	return out
}

// zeroJSON reports whether a JSON value is empty: null, false, 0, "", [] or {}.
func zeroJSON(v string) bool {
	switch strings.TrimSpace(v) {
	case "null", "false", "0", `""`, "[]", "{}":
		return true
	}
	return false
}

// usageErr builds a usage error.
func usageErr(where, format string, args ...any) error {
	return &config.UsageError{Where: where, Err: fmt.Errorf(format, args...)}
}
