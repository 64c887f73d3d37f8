package waiver

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// Rule ids of the waiver audit (internal/rules/exceptions).
const (
	RuleExpired = "exception-expired"
	RuleUnused  = "exception-unused"
	RuleIgnored = "exception-ignored"
	RuleInvalid = "exception-invalid"
)

// Clock tells the time; expiry is judged against it.
type Clock interface{ Now() time.Time }

// SystemClock is the machine's clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// Set is one run's exceptions from the trusted config. Apply it to every
// unit's findings, then Audit it once. It is safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	now     time.Time
	source  string
	file    string
	rules   map[string]string
	entries []*entry
}

type entry struct {
	config.Exception
	index   int
	expired bool
	used    bool
}

// New returns the Set of the trusted config's exceptions. source names the
// config in reports ("--config ci/gate.yaml", "functionConfig"); file is
// its path, if it has one.
func New(trusted *config.Spec, source, file string, clock Clock) *Set {
	s := &Set{now: clock.Now(), source: source, file: file}
	if trusted == nil {
		return s
	}
	s.rules = trusted.Rules
	for i, e := range trusted.Exceptions {
		s.entries = append(s.entries, &entry{Exception: e, index: i, expired: expired(e, s.now)})
	}
	return s
}

// expired reports whether an exception is past its expires date at now. A
// date that does not parse (Validate refuses it) counts as expired.
func expired(e config.Exception, now time.Time) bool {
	at, err := e.ExpiresAt()
	return err != nil || !now.Before(at)
}

// Scope is what Apply needs to know about one unit of the run.
type Scope struct {
	// Config is the unit's config (the trusted one, tightened by an
	// in-tree Gate): which rules are unwaivable, whether annotations count,
	// the severities of the audit findings.
	Config *config.Spec
	// Resources are the unit's objects, read for waiver annotations.
	Resources []*yaml.RNode
	// Owners are the Argo CD Applications / Flux objects (namespace/name)
	// whose render the unit is, for match.app.
	Owners []string
	// Fixed reports rules that can never be waived (rules.Rule.Unwaivable).
	Fixed func(rule string) bool
	// InTree is the unit's in-tree Gate/Pin, whose exceptions are ignored.
	InTree *config.Object
}

// Apply marks the findings the Set's exceptions and, where the config lets
// them count, the objects' waiver annotations waive, and returns them with
// the unit's audit findings appended: annotations that are invalid,
// expired, unused or ignored, in-tree exceptions ignored, and exceptions
// that matched a finding no waiver may hide.
func (s *Set) Apply(fs []finding.Finding, sc Scope) []finding.Finding {
	if sc.Config == nil {
		sc.Config = config.Default()
	}
	notes := &notes{seen: map[string]bool{}}
	s.applyEntries(fs, sc, notes)
	var audit []finding.Finding
	audit = append(audit, inTreeIgnored(sc.InTree)...)
	audit = append(audit, notes.out...)
	audit = append(audit, applyAnnotations(fs, sc, s.now)...)
	return append(fs, finding.Configure(audit, sc.Config.Rules)...)
}

// notes collects exception-ignored findings once per entry and rule.
type notes struct {
	seen map[string]bool
	out  []finding.Finding
}

func (n *notes) unwaivable(source, name string, f finding.Finding) {
	key := source + "\x00" + name + "\x00" + f.Rule
	if n.seen[key] {
		return
	}
	n.seen[key] = true
	why := "which is not waivable"
	if f.NoVerdict {
		why = "which is no verdict: what the gate could not check is never waived"
	}
	n.out = append(n.out, finding.Finding{Rule: RuleIgnored, Severity: finding.SeverityWarning,
		Field:   &finding.Field{Path: name},
		Message: fmt.Sprintf("%s matches %s on %s, %s: the finding stands", name, f.Rule, refOrRun(f.ResourceRef), why)})
}

func refOrRun(r *finding.ResourceRef) string {
	if r == nil {
		return "the render"
	}
	return r.String()
}

// waivable reports whether a finding may be suppressed at all.
func waivable(f finding.Finding, sc Scope) bool {
	return !f.NoVerdict && (sc.Fixed == nil || !sc.Fixed(f.Rule)) && sc.Config.Waivable(f.Rule)
}

func (s *Set) applyEntries(fs []finding.Finding, sc Scope, n *notes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range fs {
		f := &fs[i]
		if f.Suppressed != nil || f.Severity == finding.SeverityInfo {
			continue
		}
		for _, e := range s.entries {
			if e.expired || !slices.Contains(e.Rules, f.Rule) || !matches(e.Match, *f, sc.Owners) {
				continue
			}
			e.used = true
			if !waivable(*f, sc) {
				n.unwaivable(s.source, e.Name(e.index), *f)
				continue
			}
			f.Suppressed = &finding.Suppression{Kind: finding.SuppressedByException, Reason: e.Reason, Owner: e.Owner,
				Expires: e.Expires, Source: strings.TrimSpace(s.source + " " + fmt.Sprintf("spec.exceptions[%d]", e.index))}
			break
		}
	}
}

// Audit returns the run's findings about the trusted exceptions: each
// expired entry (error) and each entry that waived nothing (warning). Call
// it once, after every unit was applied.
func (s *Set) Audit() []finding.Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []finding.Finding
	for _, e := range s.entries {
		name := e.Name(e.index)
		f := finding.Finding{Field: &finding.Field{Path: fmt.Sprintf("spec.exceptions[%d]", e.index)}}
		if s.file != "" {
			f.File = &finding.File{Path: s.file}
		}
		switch {
		case e.expired:
			f.Rule, f.Severity = RuleExpired, finding.SeverityError
			f.Message = fmt.Sprintf("%s of %s expired on %s and waives nothing (reason was: %s): renew it with a new date or remove it", name, strings.Join(e.Rules, ","), e.Expires, e.Reason)
		case !e.used:
			f.Rule, f.Severity = RuleUnused, finding.SeverityWarning
			f.Message = fmt.Sprintf("%s of %s waived nothing in this run: remove it, or fix its match %s", name, strings.Join(e.Rules, ","), describeMatch(e.Match))
		default:
			continue
		}
		out = append(out, f)
	}
	return finding.Configure(out, s.rules)
}

func describeMatch(m config.ExceptionMatch) string {
	var parts []string
	for _, kv := range [][2]string{{"kind", m.Kind}, {"namespace", m.Namespace}, {"name", m.Name}, {"app", m.App}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+": "+kv[1])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// matches reports whether every field of m that is set matches the
// finding: kind, namespace and name its object, app an owner of its render
// or the Application/Flux object itself.
func matches(m config.ExceptionMatch, f finding.Finding, owners []string) bool {
	if m.Empty() {
		return false
	}
	r := f.ResourceRef
	if (m.Kind != "" || m.Namespace != "" || m.Name != "") && r == nil {
		return false
	}
	if m.Kind != "" && r.Kind != m.Kind || m.Namespace != "" && r.Namespace != m.Namespace || m.Name != "" && r.Name != m.Name {
		return false
	}
	if m.App == "" {
		return true
	}
	for _, o := range owners {
		if appIs(m.App, o) {
			return true
		}
	}
	return r != nil && slices.Contains(appKinds, r.Kind) && appIs(m.App, r.Namespace+"/"+r.Name)
}

// appKinds are the kinds match.app names.
var appKinds = []string{"Application", "ApplicationSet", "Kustomization", "HelmRelease"}

// appIs reports whether app ("name" or "namespace/name") names owner
// ("namespace/name").
func appIs(app, owner string) bool {
	if strings.Contains(app, "/") {
		return app == owner
	}
	_, name, _ := strings.Cut(owner, "/")
	if name == "" {
		name = owner
	}
	return app == name
}

// inTreeIgnored warns that an in-tree Gate/Pin's exceptions (or its
// exceptionsFromAnnotations) do not count: it may only tighten.
func inTreeIgnored(obj *config.Object) []finding.Finding {
	if obj == nil || len(obj.Spec.Exceptions) == 0 && !obj.Spec.ExceptionsFromAnnotations {
		return nil
	}
	what := fmt.Sprintf("%d exception(s)", len(obj.Spec.Exceptions))
	if len(obj.Spec.Exceptions) == 0 {
		what = "exceptionsFromAnnotations: true"
	}
	return []finding.Finding{{Rule: RuleIgnored, Severity: finding.SeverityWarning,
		ResourceRef: &finding.ResourceRef{APIVersion: obj.APIVersion, Kind: obj.Kind, Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace},
		Field:       &finding.Field{Path: "spec.exceptions"},
		Message:     fmt.Sprintf("the in-tree %s %s sets %s: ignored, an in-tree Gate may only tighten; exceptions belong in the trusted --config", obj.Kind, obj.Metadata.Name, what)}}
}
