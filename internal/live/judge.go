package live

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// Expect is what the caller expects the app to run.
type Expect struct {
	// Revision is the expected commit; "" means none was given.
	Revision string
	// RevisionFrom says where it came from ("--revision", "--git DIR").
	RevisionFrom string
	// Render is the expected render (-k DIR, or the Application's sources
	// rendered from --apps-root DIR); HasRender tells an empty render from
	// none.
	Render    []*yaml.RNode
	HasRender bool
	// RenderFrom names the render ("-k overlays/prod",
	// "--apps-root . (spec.source.path overlays/prod)").
	RenderFrom string
	// Config holds rule severities and the ignoreDifferences allow-list;
	// nil means the defaults.
	Config *config.Spec
}

// Result is the verdict of `status` with the facts behind it, for the
// at-a-glance block.
type Result struct {
	App    *App
	Expect Expect
	// RevisionOK is true when a synced revision is the expected one.
	RevisionOK   bool
	Expected     []Expected
	ImagesFrom   string
	Unexpected   []Running
	Managed      int
	ExpectedObjs int // -1 without a render
	Unhealthy    []Unhealthy
	Findings     []finding.Finding
}

// Unhealthy is a managed object live-health fired on.
type Unhealthy struct {
	Ref     ManagedRef
	Problem Problem
}

// Judge runs the live rules on a snapshot. It reads nothing from the
// cluster: it is table-testable.
func Judge(s *Snapshot, exp Expect) *Result {
	cfg := exp.Config
	if cfg == nil {
		cfg = config.Default()
	}
	r := &Result{App: s.App, Expect: exp, Managed: len(s.App.Resources), ExpectedObjs: -1}
	appRef := &finding.ResourceRef{APIVersion: ApplicationGVK.GroupVersion().String(), Kind: "Application", Namespace: s.App.Namespace, Name: s.App.Name}
	var fs []finding.Finding
	fs = append(fs, r.judgeRevision(exp, appRef)...)
	fs = append(fs, r.judgeImages(s, exp, cfg)...)
	fs = append(fs, r.judgeCount(s, exp, appRef)...)
	fs = append(fs, r.judgeHealth(s)...)
	fs = append(fs, ignoreDifferences(s.AppObject, cfg)...)
	r.Findings = finding.Configure(fs, cfg.Rules)
	return r
}

func (r *Result) judgeImages(s *Snapshot, exp Expect, cfg *config.Spec) []finding.Finding {
	if exp.HasRender {
		r.Expected, r.ImagesFrom = expectedFromRender(exp.Render, images.ConfiguredPaths(cfg)), "the render ("+exp.RenderFrom+")"
	} else {
		r.Expected, r.ImagesFrom = expectedFromSummary(s.App.SummaryImages, s.Objects), "status.summary.images"
	}
	var out []finding.Finding
	for _, run := range s.running() {
		matched := false
		for i, e := range r.Expected {
			if matches(e, run) {
				r.Expected[i].Pods = append(r.Expected[i].Pods, run.Pods...)
				matched = true
			}
		}
		if !matched {
			r.Unexpected = append(r.Unexpected, run)
			out = append(out, finding.Finding{Rule: "live-images", Severity: finding.SeverityError,
				ResourceRef: &finding.ResourceRef{APIVersion: run.Workload.APIVersion(), Kind: run.Workload.Kind, Namespace: run.Workload.Namespace, Name: run.Workload.Name},
				Field:       &finding.Field{Path: "image", CurrentValue: withDigest(run.Ref, run.Digest)},
				Message:     fmt.Sprintf("pod %s runs %s, which is not in %s", firstPods(run.Pods), withDigest(run.Ref, run.Digest), r.ImagesFrom)})
		}
	}
	for _, e := range r.Expected {
		if e.MustRun && len(e.Pods) == 0 {
			out = append(out, finding.Finding{Rule: "live-images", Severity: finding.SeverityError,
				ResourceRef: &finding.ResourceRef{APIVersion: ApplicationGVK.GroupVersion().String(), Kind: "Application", Namespace: s.App.Namespace, Name: s.App.Name},
				Field:       &finding.Field{Path: "image", ProposedValue: e.Ref},
				Message:     fmt.Sprintf("%s is expected by %s but no pod of the app's workloads runs it", e.Ref, r.ImagesFrom)})
		}
	}
	return out
}

func (r *Result) judgeCount(s *Snapshot, exp Expect, appRef *finding.ResourceRef) []finding.Finding {
	var out []finding.Finding
	add := func(msg string, current, proposed any) {
		out = append(out, finding.Finding{Rule: "live-resource-count", Severity: finding.SeverityError, ResourceRef: appRef,
			Field: &finding.Field{Path: "status.resources", CurrentValue: current, ProposedValue: proposed}, Message: msg})
	}
	if exp.HasRender {
		r.ExpectedObjs = 0
		for _, obj := range exp.Render {
			if !isLocal(obj) {
				r.ExpectedObjs++
			}
		}
	}
	switch {
	case r.Managed == 0:
		add("the Application manages 0 objects: an empty source syncs green and deploys nothing", 0, nil)
	case r.ExpectedObjs >= 0 && r.Managed != r.ExpectedObjs:
		add(fmt.Sprintf("the Application manages %d object(s) but %s holds %d%s", r.Managed, exp.RenderFrom, r.ExpectedObjs, countDiff(s, exp.Render)), r.Managed, r.ExpectedObjs)
	}
	for _, o := range s.Objects {
		if o.Live == nil {
			out = append(out, finding.Finding{Rule: "live-resource-count", Severity: finding.SeverityError,
				ResourceRef: &finding.ResourceRef{APIVersion: o.Ref.APIVersion(), Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name},
				Message:     "listed in the Application's status.resources but " + o.Ref.Kind + "/" + o.Ref.Name + " is " + o.Missing})
		}
	}
	return out
}

func (r *Result) judgeHealth(s *Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, o := range s.Objects {
		if o.Live == nil {
			continue
		}
		for _, p := range Health(o.Live) {
			r.Unhealthy = append(r.Unhealthy, Unhealthy{Ref: o.Ref, Problem: p})
			out = append(out, finding.Finding{Rule: "live-health", Severity: finding.SeverityError,
				ResourceRef: &finding.ResourceRef{APIVersion: o.Ref.APIVersion(), Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name},
				Field:       &finding.Field{Path: p.Path, CurrentValue: p.Value}, Message: p.Message})
		}
	}
	return out
}

// isLocal reports objects that are never applied or not counted as part of
// the app: local config, the gate's config, and sync hooks.
func isLocal(obj *yaml.RNode) bool {
	a := obj.GetAnnotations()
	return manifest.IsLocalConfig(obj) || a["argocd.argoproj.io/hook"] != "" || a["helm.sh/hook"] != ""
}

func withDigest(ref, digest string) string {
	if digest == "" || strings.Contains(ref, "@") {
		return ref
	}
	return ref + " (" + digest + ")"
}

func firstPods(pods []string) string {
	if len(pods) <= 2 {
		return strings.Join(pods, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(pods[:2], ", "), len(pods)-2)
}
