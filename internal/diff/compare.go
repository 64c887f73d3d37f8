package diff

import (
	"errors"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/baseline"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Run is one side of the comparison: what the pipeline found, or why it
// has no verdict.
type Run struct {
	// Label names the side: "main (3f2a1c0)", "working tree".
	Label  string
	Result *pipeline.Result
	// Report is Result.Report() (with the baseline applied, if any).
	Report *finding.Report
	// Err is why the pipeline did not run at all (a directory missing at
	// the revision).
	Err error
}

// Report is what a change does.
type Report struct {
	Base string `json:"base"`
	Head string `json:"head"`
	// Renderers are the versions the renders used.
	Renderers map[string]string `json:"renderers"`
	// BaseNoVerdict says why the base has no verdict: every head finding
	// then counts as new.
	BaseNoVerdict []string `json:"baseNoVerdict,omitempty"`
	// HeadNoVerdict says why the head has no verdict (exit 3).
	HeadNoVerdict []string     `json:"headNoVerdict,omitempty"`
	Units         []UnitChange `json:"units"`
	Counts        Counts       `json:"counts"`
}

// Counts sum a report.
type Counts struct {
	New       int `json:"new"`
	NewErrors int `json:"newErrors"`
	Fixed     int `json:"fixed"`
	Unchanged int `json:"unchanged"`
	Added     int `json:"objectsAdded"`
	Removed   int `json:"objectsRemoved"`
	Changed   int `json:"objectsChanged"`
	// UnchangedUnits counts the inputs and apps with no change at all.
	UnchangedUnits int `json:"unchangedUnits"`
	// NotRenderedAgain counts the apps neither rendered again nor checked
	// (pipeline.Reuse): neither their Application nor a file they read
	// changed, so their findings cannot differ.
	NotRenderedAgain int `json:"notRenderedAgain"`
}

// UnitChange is what changed in one input or app.
type UnitChange struct {
	// Input names the input or app ("-k overlays/prod", "Application
	// argocd/shop spec.source from apps/shop").
	Input     string            `json:"input"`
	Objects   []ObjectChange    `json:"objects,omitempty"`
	New       []finding.Finding `json:"new,omitempty"`
	Fixed     []finding.Finding `json:"fixed,omitempty"`
	Unchanged []finding.Finding `json:"unchanged,omitempty"`
	// Status is "" or why the side could not be compared ("not at base").
	Status string `json:"status,omitempty"`
	// NotRenderedAgain is set when the app was neither rendered again nor
	// checked (pipeline.Reuse): nothing it reads changed, and its findings,
	// the same at both revisions, are not listed.
	NotRenderedAgain bool `json:"notRenderedAgain,omitempty"`
}

// Empty reports whether nothing changed in the unit.
func (u UnitChange) Empty() bool {
	return len(u.Objects) == 0 && len(u.New) == 0 && len(u.Fixed) == 0 && u.Status == ""
}

// Compare compares the base run with the head run.
func Compare(base, head Run, kubernetesVersion string) *Report {
	r := &Report{Base: base.Label, Head: head.Label, Renderers: Renderers(kubernetesVersion)}
	r.BaseNoVerdict = noVerdict(base)
	r.HeadNoVerdict = noVerdict(head)
	units := map[string]*UnitChange{}
	var order []string
	unit := func(input string) *UnitChange {
		if u, ok := units[input]; ok {
			return u
		}
		units[input] = &UnitChange{Input: input}
		order = append(order, input)
		return units[input]
	}
	baseUnits := map[string]*pipeline.Unit{}
	if base.Result != nil {
		for _, u := range base.Result.Units {
			baseUnits[u.Input()] = u
		}
	}
	if head.Result != nil {
		for _, u := range head.Result.Units {
			uc := unit(u.Input())
			b, ok := baseUnits[u.Input()]
			switch {
			case u.Err != nil:
				uc.Status = "no verdict at head: " + u.Err.Error()
			case !ok:
				uc.Status = "new: not an input or app at base"
				uc.Objects = Objects(nil, u.Resources)
			case b.Err != nil:
				uc.Status = "no verdict at base: " + describe(b.Err)
				uc.Objects = Objects(nil, u.Resources)
			case base.Result.Reused(b):
				// The same render: no object differs.
				uc.NotRenderedAgain = base.Result.Unchecked(b)
			default:
				uc.Objects = Objects(b.Resources, u.Resources)
			}
			delete(baseUnits, u.Input())
		}
	}
	if base.Result != nil {
		for _, u := range base.Result.Units {
			if _, gone := baseUnits[u.Input()]; gone {
				uc := unit(u.Input())
				uc.Status = "removed: not an input or app at head"
				uc.Objects = Objects(u.Resources, nil)
			}
		}
	}
	var baseFindings []finding.Finding
	if base.Report != nil && len(r.BaseNoVerdict) == 0 {
		baseFindings = base.Report.Findings
	}
	var headFindings []finding.Finding
	if head.Report != nil {
		headFindings = head.Report.Findings
	}
	newF, fixed, same := Findings(baseFindings, headFindings)
	for _, f := range newF {
		u := unit(inputOf(f))
		u.New = append(u.New, redact(f))
		r.Counts.New++
		if f.Severity == finding.SeverityError && f.Suppressed == nil {
			r.Counts.NewErrors++
		}
	}
	for _, f := range fixed {
		u := unit(inputOf(f))
		u.Fixed = append(u.Fixed, redact(f))
		r.Counts.Fixed++
	}
	for _, f := range same {
		u := unit(inputOf(f))
		u.Unchanged = append(u.Unchanged, redact(f))
		r.Counts.Unchanged++
	}
	for _, in := range order {
		u := units[in]
		for _, o := range u.Objects {
			switch o.Change {
			case Added:
				r.Counts.Added++
			case Removed:
				r.Counts.Removed++
			default:
				r.Counts.Changed++
			}
		}
		if u.Empty() {
			r.Counts.UnchangedUnits++
		}
		if u.NotRenderedAgain {
			r.Counts.NotRenderedAgain++
		}
		r.Units = append(r.Units, *u)
	}
	return r
}

func inputOf(f finding.Finding) string {
	if f.Input == "" {
		return "(the run)"
	}
	return f.Input
}

// describe says what an error of a run or unit is; a usage error (a
// typo'd in-tree Gate) says so: at the base, it is the base's no verdict,
// and the change may be what fixes it.
func describe(err error) string {
	var ue *config.UsageError
	if errors.As(err, &ue) {
		return "usage error: " + err.Error()
	}
	return err.Error()
}

// noVerdict lists why a run has no verdict.
func noVerdict(r Run) []string {
	switch {
	case r.Err != nil:
		return []string{describe(r.Err)}
	case r.Report == nil:
		return []string{"not run"}
	case r.Report.Verdict(false) == finding.VerdictNoVerdict:
		out := slices.Clone(r.Report.Failures)
		if r.Result != nil {
			usage := map[string]bool{}
			for _, u := range r.Result.Units {
				if u.Err != nil && describe(u.Err) != u.Err.Error() {
					usage[u.Err.Error()] = true
				}
			}
			for i, f := range out {
				if usage[f] {
					out[i] = "usage error: " + f
				}
			}
		}
		for _, f := range r.Report.Findings {
			if f.NoVerdict && f.Severity == finding.SeverityError {
				out = append(out, f.Rule+": "+f.Message)
			}
		}
		return out
	}
	return nil
}

// Findings splits head's findings into new and unchanged and base's into
// fixed, by fingerprint (internal/baseline), counting occurrences.
func Findings(base, head []finding.Finding) (newF, fixed, unchanged []finding.Finding) {
	left := map[string][]finding.Finding{}
	for _, f := range base {
		fp := baseline.EntryOf(f).Fingerprint
		left[fp] = append(left[fp], f)
	}
	for _, f := range head {
		fp := baseline.EntryOf(f).Fingerprint
		if len(left[fp]) > 0 {
			left[fp] = left[fp][1:]
			unchanged = append(unchanged, f)
			continue
		}
		newF = append(newF, f)
	}
	for _, f := range base {
		fp := baseline.EntryOf(f).Fingerprint
		if len(left[fp]) > 0 {
			fixed = append(fixed, left[fp][0])
			left[fp] = left[fp][1:]
		}
	}
	return newF, fixed, unchanged
}

// redact drops a finding's values when it is about a Secret: a value must
// never be printed, in any format.
func redact(f finding.Finding) finding.Finding {
	if f.ResourceRef == nil || f.ResourceRef.Kind != "Secret" || f.Field == nil {
		return f
	}
	fc := *f.Field
	fc.CurrentValue, fc.ProposedValue = nil, nil
	f.Field = &fc
	return f
}

// Renderers names the renderer versions: the kustomize API and Helm SDK
// linked into the binary, and the Kubernetes schema the checks used.
func Renderers(kubernetesVersion string) map[string]string {
	out := map[string]string{"kustomize": "unknown", "helm": "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch {
			case d.Path == "sigs.k8s.io/kustomize/api":
				out["kustomize"] = "api " + d.Version
			case strings.HasPrefix(d.Path, "helm.sh/helm/"):
				out["helm"] = "SDK " + d.Version
			}
		}
	}
	if kubernetesVersion == "" {
		v := schema.Versions()
		kubernetesVersion = v[len(v)-1]
	}
	out["kubernetesSchema"] = kubernetesVersion
	return out
}
