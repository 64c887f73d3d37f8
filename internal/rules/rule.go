package rules

import (
	"runtime"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// Rule is one check. Check returns findings at the rule's default severity;
// Run applies the configured severity and drops findings of rules that are
// off. A rule whose Check is nil is judged elsewhere (the live rules of
// `kubectl gate status`): it is registered so config, output and docs know
// its id.
type Rule struct {
	ID      string
	Default finding.Severity
	// Doc says when the rule fires, in one line (--help, SARIF, README).
	Doc string
	// Outage is the outage it prevents, in one line (README).
	Outage string
	// Fix says how to make the rule pass, in one line (docs/rules.md,
	// SARIF help, `kubectl gate rules ID`).
	Fix    string
	Family string
	Check  func(*Context) []finding.Finding
	// NoVerdict marks a rule whose findings mean the gate could not decide
	// (a registry that did not answer): they are always errors and end in
	// exit 3; no flag, config or in-tree object turns them off or lowers
	// them (README, "Exit codes").
	NoVerdict bool
	// MayNoVerdict marks a rule some of whose findings are no verdict (a
	// source it could not render, a schema it could not load): it runs even
	// when configured off, and those findings are kept (finding.Configure);
	// off drops only its findings that are a verdict.
	MayNoVerdict bool
	// Unwaivable marks a rule no exception, waiver annotation or baseline
	// may suppress (render-empty, gate-placement, the not-rendered rules,
	// the exception rules themselves). Findings that are no verdict are
	// never waivable whatever the rule (README "Waivers, baselines and
	// pull requests").
	Unwaivable bool
	// PerObject marks a rule whose findings on a render are those it gives
	// on each object alone, in the render's order: on a render cut in
	// runs of objects, its findings are the runs' findings end to end. The
	// streamed check (gate.Streamed) runs it on each run as the render is
	// read, before the objects are released. It holds under the streamed
	// check's conditions: the gate neither pins nor verifies, evaluates no
	// policy, and the render holds no CRD.
	PerObject bool
	// Reads names the kinds of which a rule that is not PerObject reads
	// more than what names an object (apiVersion, kind, and metadata's
	// name, namespace, generateName and annotations: manifest.Release),
	// under the same conditions: kind names, whatever the group, or
	// "Kind/name" for the objects of that name only. The streamed check
	// keeps those objects whole and releases every other one once the
	// PerObject rules have judged it. nil means not said: every object is
	// kept whole. Empty (non-nil): the rule reads no more than names of
	// any object. TestReadsHold holds each rule to it.
	Reads []string
	// Follows names the kinds (as Reads does) a rule reads more of only
	// where an object it reads names one (a Rollout's Service, the
	// Deployment of its workloadRef), and then only through Context.Whole.
	// The streamed check packs those objects before it releases them.
	Follows []string
	// Mutation says in a few words what selftest changes to make this rule
	// fire; Mutants are those changes.
	Mutation string
	Mutants  []Mutant
}

// Families, in the order rules are listed.
var Families = []string{"render", "schema", "images", "rollouts", "argocd", "flux", "policy", "exceptions", "live"}

// Mutant changes a copy of a passing input so that its rule must fire.
// Apply edits s in place and returns false when the input holds nothing to
// mutate (no digest to replace, no Rollout to break); selftest then reports
// the row as "not applicable".
type Mutant struct {
	Name  string
	Apply func(s *Subject) bool
	// NeedsApps marks a mutant that changes the renders of Applications'
	// sources: selftest runs it only when they were rendered (--apps-root).
	NeedsApps bool
}

// Subject is what a Mutant may change: a copy of the resources, of the
// configuration and of the Applications' source renders.
type Subject struct {
	Resources []*yaml.RNode
	Config    *config.Spec
	Apps      []argo.AppSource
}

// Context is what a rule's Check sees: the rendered resources and the
// configuration, plus facts gathered before the rules ran.
type Context struct {
	Resources []*yaml.RNode
	Config    *config.Spec
	// Counted is the number of resources that count as rendered (local
	// config and the gate's own config excluded).
	Counted int
	// Placement holds the gate-placement problems the renderer saw.
	Placement []finding.Finding
	// Resolutions holds registry answers by reference; nil when the gate
	// ran without a resolver (digest: require).
	Resolutions map[string]images.Resolution
	// Pinning is true when the gate resolves tags instead of reporting them.
	Pinning bool
	// Signatures holds the signature check of every image reference with
	// a digest, by reference; nil when no signer is configured or the gate
	// neither pins nor verifies (rule image-signature).
	Signatures map[string]images.SignatureVerdict
	// Apps holds, for each Argo CD Application of the input whose source
	// was rendered (--apps-root), that render.
	Apps []argo.AppSource
	// Shared indexes the objects the Applications of every unit of the run
	// render (app-shared-object across units); Unit is this render's
	// index in it. Nil: the rule indexes Apps alone.
	Shared *argo.Ownership
	Unit   int
	// AppNames indexes the Argo CD Applications every unit of the run
	// holds, written or generated by an ApplicationSet, by Unit
	// (render-duplicate across units); nil: this render alone.
	AppNames *argo.AppNames
	// CRDs are CustomResourceDefinitions from outside the render (--crd,
	// schema.crds), read by the shell; the schema rules use them.
	CRDs []*yaml.RNode
	// Policy holds the findings of the configured policies (--policy,
	// spec.policies, --kyverno-policy, --rego), evaluated before the rules
	// ran by the shell's policy checker.
	Policy []finding.Finding

	// Packed holds the objects the streamed check packed before it
	// released them (their kinds a rule Follows): Whole gives them back.
	Packed map[*yaml.Node]*PackedObject
	// Run is the context of the whole render this one holds a run of
	// objects of (the streamed check's), for RunMemo; nil: this one.
	Run *Context
	// Released holds the objects the streamed check released
	// (manifest.Release) once the PerObject rules had judged them, with
	// their content keys; nil when every object is whole.
	Released map[*yaml.Node]manifest.ContentKey

	indexOnce sync.Once
	index     *manifest.Index
	mu        sync.Mutex
	cache     map[string]*memo
}

// memo is one Memo value, built once even when rules ask for it at the
// same time.
type memo struct {
	once sync.Once
	v    any
}

// PackedObject is an object the streamed check packed and released.
type PackedObject struct {
	Packed manifest.Packed
	once   sync.Once
	whole  *yaml.RNode
}

// Whole returns r with all its fields: r itself, or for an object the
// streamed check packed and released, its tree unpacked (a new node, with
// the same fields and lines, unpacked once however many rules ask). A rule
// reads the objects of a kind it Follows through it. Safe for rules
// running at the same time.
func (c *Context) Whole(r *yaml.RNode) *yaml.RNode {
	if r == nil {
		return nil
	}
	p := c.Packed[r.YNode()]
	if p == nil {
		return r
	}
	p.once.Do(func() { p.whole = manifest.Unpack(p.Packed) })
	return p.whole
}

// Index returns the resources indexed by kind, namespace and name. Safe
// for rules running at the same time: it is built once.
func (c *Context) Index() *manifest.Index {
	c.indexOnce.Do(func() { c.index = manifest.NewIndex(c.Resources) })
	return c.index
}

// Memo returns the value cached under key for this run, computing it once:
// rules that need a whole-render view (which Rollouts name which Service,
// every image of the render) build it once, not once per rule or object.
// Rules run at the same time (Run): the first to ask builds the value and
// the others wait for it. build must not ask for its own key.
func Memo[T any](c *Context, key string, build func() T) T {
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[string]*memo{}
	}
	m := c.cache[key]
	if m == nil {
		m = &memo{}
		c.cache[key] = m
	}
	c.mu.Unlock()
	m.once.Do(func() { m.v = build() })
	return m.v.(T)
}

// RunMemo is Memo on the context of the whole render (Context.Run): a
// value that depends on the configuration alone (a validator), built once
// for every run of objects a streamed check judges.
func RunMemo[T any](c *Context, key string, build func() T) T {
	if c.Run != nil {
		c = c.Run
	}
	return Memo(c, key, build)
}

// Run runs every rule with a Check that the configuration does not turn
// off, stamps each finding with its rule's id and applies the configured
// severities (finding.Configure, the one place they are applied).
//
// Rules read the render and share whole-render views through Memo and
// Index; none changes the resources, so they run at the same time, on
// every core, and their findings are put together in the order of all, as
// one after another would give them. A rule that panics panics Run with the same value, in the
// caller's goroutine, as it did when rules ran one after another (the
// first such rule in order).
func Run(c *Context, all []Rule) []finding.Finding {
	return RunWith(c, all, nil)
}

// Runs reports whether Run runs a rule under cfg: it has a Check, and is
// not off (a rule that may be no verdict runs off too).
func Runs(cfg *config.Spec, r Rule) bool {
	return r.Check != nil && (cfg.Rules[r.ID] != finding.Off || r.NoVerdict || r.MayNoVerdict)
}

// RunWith is Run, with the findings of the rules in done already judged
// (their Check not called again: the streamed check's PerObject rules,
// judged as the render was read), put in their place as Run would.
func RunWith(c *Context, all []Rule, done map[string][]finding.Finding) []finding.Finding {
	var todo, ran []Rule
	for _, r := range all {
		if !Runs(c.Config, r) {
			continue
		}
		ran = append(ran, r)
		if _, ok := done[r.ID]; !ok {
			todo = append(todo, r)
		}
	}
	per := make([][]finding.Finding, len(todo))
	panics := make([]any, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	for range workers {
		wg.Go(func() {
			for i := range next {
				per[i], panics[i] = check(c, todo[i])
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	var out []finding.Finding
	for i := range todo {
		if panics[i] != nil {
			panic(panics[i])
		}
	}
	k := 0
	for _, r := range ran {
		fs, ok := done[r.ID]
		if !ok {
			fs, k = per[k], k+1
		}
		for _, f := range fs {
			f.Rule = r.ID
			f.NoVerdict = f.NoVerdict || r.NoVerdict
			out = append(out, f)
		}
	}
	return finding.Configure(out, c.Config.Rules)
}

// check runs one rule, catching its panic for Run to raise again.
func check(c *Context, r Rule) (fs []finding.Finding, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			fs, panicked = nil, p
		}
	}()
	return r.Check(c), nil
}

// parallelFrom is the number of objects from which PerObject spreads
// them over every core: below it, starting goroutines costs more than
// it saves.
const parallelFrom = 64

// PerObject runs check on each object and returns the findings in the
// order of objs, as a loop over them would, on every core: a rule whose
// objects are judged one by one (by the Argo Rollouts controller's
// validation, say) does not hold up the end of Run on one core while the
// others are done. check may read the Context (Index and Memo are safe
// for concurrent use) but must not change anything shared. A panic in
// check is raised again in the caller's goroutine, the first in object
// order, so that Run reports it as the rule's.
func PerObject(objs []*yaml.RNode, check func(*yaml.RNode) []finding.Finding) []finding.Finding {
	per := make([][]finding.Finding, len(objs))
	if len(objs) < parallelFrom {
		for i, o := range objs {
			per[i] = check(o)
		}
	} else {
		workers.Each(len(objs), func(i int) bool {
			per[i] = check(objs[i])
			return true
		})
	}
	var out []finding.Finding
	for _, fs := range per {
		out = append(out, fs...)
	}
	return out
}

// Ran lists the ids of the rules Run runs under cfg's severities, in
// order: the reports say which rules judged the render (JUnit skips the
// others).
func Ran(cfg *config.Spec, all []Rule) []string {
	var out []string
	for _, r := range all {
		if Runs(cfg, r) {
			out = append(out, r.ID)
		}
	}
	return out
}

// OnResources makes a Mutant's Apply from an edit of the resources: edit
// returns the mutated resources, or false when it does not apply.
func OnResources(edit func(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool)) func(*Subject) bool {
	return func(s *Subject) bool {
		out, ok := edit(s.Resources, s.Config)
		if ok {
			s.Resources = out
		}
		return ok
	}
}

// Excluded returns the entry of spec.argocd.exclude (--exclude-app) that
// names r ("name" or "namespace/name"), or "": the trusted caller took it
// out of scope, and the report lists it.
func Excluded(c *Context, r *yaml.RNode) string {
	e, _ := ExcludedBy(c, r)
	return e
}

// ExcludedBy is Excluded and what excluded it: "--exclude-app" when the
// flag added the entry, else "spec.argocd.exclude".
func ExcludedBy(c *Context, r *yaml.RNode) (entry, by string) {
	for _, e := range c.Config.ArgoCD.Exclude {
		if ExcludeMatches(e, r) {
			if slices.Contains(c.Config.ArgoCD.FromFlag, e) {
				return e, "--exclude-app"
			}
			return e, "spec.argocd.exclude"
		}
	}
	return "", ""
}

// ExcludeMatches reports whether an exclusion entry ("name" or
// "namespace/name") names r.
func ExcludeMatches(e string, r *yaml.RNode) bool {
	return e == manifest.Name(r) || e == manifest.Namespace(r)+"/"+manifest.Name(r)
}
