package gate

import (
	"sort"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	renderrules "github.com/kubectl-gate/kubectl-gate/internal/rules/render"
)

// Streamed is the check of one render judged while it is read: the rules
// that judge objects one by one (rules.Rule.PerObject) run on each run of
// objects as the reader hands it over (Each, a stream.Each), and the
// objects no other rule reads in full (rules.Rule.Reads) are then released
// (manifest.Release) down to what names them, packed first where a rule
// reads them when another object names them (rules.Rule.Follows). Finish runs
// the other rules on the whole render, released objects and all. The
// report is the one Run gives on the render: the rules that judge objects
// one by one give the same findings run by run, and the others read no
// more than was kept.
//
// A render of thousands of objects then never holds them all whole at
// once, which is what Run's memory grows with (issue 25). A render that
// holds what only Run judges (a CustomResourceDefinition the schema rules
// read for every object, an ImageLock, an object Options.Whole names) or
// makes a rule that judges objects one by one say something about the run
// rather than an object: Finish says so, and the caller reads the render
// again and gives it to Run.
type Streamed struct {
	opts   Options
	cfg    *config.Spec
	per    []rules.Rule
	keep   map[string]bool // kinds, and Kind/name, kept whole; nil: every object
	follow map[string]bool // kinds packed before they are released
	whole  func(*yaml.RNode) bool
	run    *rules.Context // what every run's context shares (rules.RunMemo)

	mu       sync.Mutex
	runs     []streamedRun
	released map[*yaml.Node]manifest.ContentKey
	packed   map[*yaml.Node]*rules.PackedObject
	fallback bool
	panicked *streamedPanic
}

// streamedRun is what the rules that judge objects one by one found in a
// run of objects, the render's first … : one slice per rule of per.
type streamedRun struct {
	first, objects int
	findings       [][]finding.Finding
}

// streamedPanic is a rule's panic in a run, raised again by Finish: the
// run's first object says which a loop in order would have met first.
type streamedPanic struct {
	first int
	value any
}

// NewStreamed returns the streamed check of a render under opts and deps,
// or nil when Run must check it whole: it pins or verifies digests (the
// registry is asked about every image first), evaluates policies, reads
// an image lock or spec.images paths (rules over every object's images),
// or checks Applications' renders. whole names objects that make the
// render one Run must check (nil: none beyond the streamed check's own).
func NewStreamed(opts Options, deps Deps, whole func(*yaml.RNode) bool) *Streamed {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	if opts.Pin || cfg.Images.Digest == config.DigestVerify || (deps.Policy != nil && cfg.Rules["policy"] != finding.Off) ||
		cfg.Images.Lock != nil || len(images.ConfiguredPaths(cfg)) > 0 || len(opts.Apps) > 0 || opts.Shared != nil {
		return nil
	}
	s := &Streamed{opts: opts, cfg: cfg, whole: whole, keep: map[string]bool{}, follow: map[string]bool{},
		released: map[*yaml.Node]manifest.ContentKey{}, packed: map[*yaml.Node]*rules.PackedObject{},
		run: &rules.Context{Config: cfg, CRDs: opts.CRDs}}
	for _, r := range all.Rules() {
		switch {
		case !rules.Runs(cfg, r):
		case r.PerObject:
			s.per = append(s.per, r)
		case r.Reads == nil:
			s.keep = nil // a rule that does not say what it reads reads everything
		case s.keep != nil:
			for _, k := range r.Reads {
				s.keep[k] = true
			}
			for _, k := range r.Follows {
				s.follow[k] = true
			}
		}
	}
	return s
}

// Each judges a run of the render's objects, first … first+len(objs)-1,
// with the rules that judge objects one by one, and releases those no
// other rule reads in full. It is a stream.Each: runs come from several
// goroutines at once, in no set order. A rule's panic is raised again by
// Finish.
func (s *Streamed) Each(first int, objs []*yaml.RNode) {
	defer func() {
		if p := recover(); p != nil {
			s.mu.Lock()
			if s.panicked == nil || first < s.panicked.first {
				s.panicked = &streamedPanic{first, p}
			}
			s.mu.Unlock()
		}
	}()
	fallback := false
	for _, r := range objs {
		if s.needsWhole(r) {
			fallback = true
		}
	}
	run := streamedRun{first: first, objects: len(objs), findings: make([][]finding.Finding, len(s.per))}
	if !fallback {
		c := &rules.Context{Resources: objs, Config: s.cfg, CRDs: s.opts.CRDs, Run: s.run}
		for i, r := range s.per {
			run.findings[i] = r.Check(c)
			for _, f := range run.findings[i] {
				if f.ResourceRef == nil {
					// About the run, not an object: said once per run
					// here, once by Run.
					fallback = true
				}
			}
		}
	}
	released := map[*yaml.Node]manifest.ContentKey{}
	packed := map[*yaml.Node]*rules.PackedObject{}
	if !fallback && s.keep != nil {
		for _, r := range objs {
			kind := manifest.Kind(r)
			if s.keep[kind] || s.keep[kind+"/"+manifest.Name(r)] || manifest.IsLocalConfig(r) {
				continue
			}
			if s.follow[kind] {
				p, ok := manifest.Pack(r)
				if !ok {
					continue // kept whole
				}
				packed[r.YNode()] = &rules.PackedObject{Packed: p}
			}
			released[r.YNode()] = manifest.ContentKeyOf(r)
			manifest.Release(r)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fallback {
		s.fallback = true
		return
	}
	s.runs = append(s.runs, run)
	for n, k := range released {
		s.released[n] = k
	}
	for n, p := range packed {
		s.packed[n] = p
	}
}

// needsWhole reports an object that makes the render one Run must check:
// a CRD (the schema rules read the render's CRDs for every object), an
// ImageLock (the lock rules read every image), or what the caller named.
func (s *Streamed) needsWhole(r *yaml.RNode) bool {
	if r.YNode().Kind != yaml.MappingNode {
		return true
	}
	switch kind := manifest.Kind(r); {
	case kind == "CustomResourceDefinition", kind == imagelock.Kind:
		return true
	}
	return s.whole != nil && s.whole(r)
}

// Whole reports, once the render is read, that it holds what only Run
// judges: read it again (its objects are released) and give it to Run.
func (s *Streamed) Whole() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fallback
}

// Finish checks the render whose objects Each judged, resources in the
// render's order, and returns Run's report on it. ok is false when the
// render must be checked whole instead: read it again and give it to Run
// (objects of it are released). It is false too when the runs Each was
// told of are not resources, every one once and in order: what the rules
// that judge objects one at a time did not see is never passed.
//
// opts are the run's options for the rules that read the whole render
// (the unit's exceptions, placement, owners); their Config must be the
// one NewStreamed was given.
func (s *Streamed) Finish(resources []*yaml.RNode, opts Options) (rep *finding.Report, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.panicked != nil {
		panic(s.panicked.value)
	}
	if s.fallback {
		return nil, false
	}
	s.opts = opts
	c := s.context(resources)
	c.Released, c.Packed = s.released, s.packed
	if !renderrules.Comparable(c) {
		return nil, false
	}
	sort.Slice(s.runs, func(i, j int) bool { return s.runs[i].first < s.runs[j].first })
	// Every object of the render judged, once, in runs end to end: an
	// object the rules that judge one at a time never saw must not pass
	// unseen; the render is checked whole instead.
	next := 0
	for _, run := range s.runs {
		if run.first != next {
			return nil, false
		}
		next += run.objects
	}
	if next != len(resources) {
		return nil, false
	}
	done := make(map[string][]finding.Finding, len(s.per))
	for i, r := range s.per {
		n := 0
		for _, run := range s.runs {
			n += len(run.findings[i])
		}
		fs := make([]finding.Finding, 0, n) // one copy of each finding
		for _, run := range s.runs {
			fs = append(fs, run.findings[i]...)
		}
		done[r.ID] = fs
	}
	return finish(c, opts, done), true
}

// context is the rules' view of a render under the streamed check's
// conditions: nothing resolved, verified or evaluated before the rules.
func (s *Streamed) context(resources []*yaml.RNode) *rules.Context {
	return &rules.Context{
		Resources: resources,
		Config:    s.cfg,
		Counted:   manifest.Count(resources),
		Placement: s.opts.Placement,
		Apps:      s.opts.Apps,
		Shared:    s.opts.Shared,
		Unit:      s.opts.Unit,
		AppNames:  s.opts.AppNames,
		CRDs:      s.opts.CRDs,
	}
}
