package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/kustomization"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// WriteKustomization renders dir, resolves its images and writes the
// digests of the images its source left unpinned into the kustomization's
// images: entries (internal/kustomization), returning each change as
// "FILE: change". It uses the run's options (Run's Options.Pin need not be
// set).
//
// When images could not be resolved it returns their image-resolve findings
// (to print with the report) and an error that groups them by cause. When
// a signature is refused it returns the image-signature findings and no
// error (a verdict), and writes nothing.
func (r *Result) WriteKustomization(ctx context.Context, dir string) (changes []string, failed []finding.Finding, err error) {
	s := r.s
	path, err := kustomization.File(dir)
	if err != nil {
		return nil, nil, err
	}
	// With --enable-helm, helmCharts: render with the same helm command as
	// -k; kustomize's images transformer applies the written entries to
	// their output too.
	helmCmd, cleanup, helmErr := s.o.Helm.command(s.helmKubeVersion())
	defer cleanup()
	u := s.renderKustomization(ctx, dir, helmCmd, helmErr)
	if u.Err != nil {
		return nil, nil, u.Err
	}
	spec, err := s.spec(u)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.resolvers.For(ctx, spec, u.Resources)
	if err != nil {
		return nil, nil, err
	}
	extra := images.ConfiguredPaths(spec)
	unpinned := kustomization.UnpinnedRepos(u.Resources, extra)
	deps := gate.Deps{Resolver: res, Version: s.o.Version}
	sigs, err := s.signaturesFor(spec, res)
	if err != nil {
		return nil, nil, err
	}
	if sigs != nil {
		deps.Signatures = sigs
	}
	// --write-lock records what this write pins, as for the run's own
	// units: without -k the kustomization is the only thing pinned, and a
	// lock built from the units alone would hold no image.
	var lockBefore []images.Image
	if s.o.Lock != nil {
		lockBefore = lockImages(u.Resources, spec)
	}
	rep, err := gate.Run(ctx, u.Resources, gate.Options{Config: spec, Pin: true}, deps)
	if err != nil {
		return nil, nil, err
	}
	if rep.NoVerdict() {
		for _, f := range rep.Findings {
			if f.NoVerdict {
				f.Input = "--write-kustomization " + dir
				failed = append(failed, f)
			}
		}
		return nil, failed, fmt.Errorf("writing %s: the file is unchanged: %s", path, resolveCauses(failed))
	}
	// A refused signature is a verdict (exit 1), not a failure to check:
	// its findings go to the report, and the file is left unchanged.
	for _, f := range rep.Findings {
		if f.Rule == "image-signature" && f.Severity == finding.SeverityError {
			f.Input = "--write-kustomization " + dir
			failed = append(failed, f)
		}
	}
	if len(failed) > 0 {
		return nil, failed, nil
	}
	if s.o.Lock != nil {
		if err := recordLock(s.o.Lock, lockBefore, lockImages(u.Resources, spec), spec.Images.Platform, sigs); err != nil {
			return nil, nil, err
		}
	}
	digests := kustomization.PinnedDigests(u.Resources, extra, unpinned)
	// The render with the digests written is made before the write, on
	// the kustomization edited in memory: it is the slow part (a remote
	// resource fetched again), so it stays inside the deadline and stops
	// on a signal, and a refusal leaves the file untouched.
	if err := s.reached(ctx, dir, helmCmd, extra, digests); err != nil {
		return nil, nil, fmt.Errorf("writing %s: the file is unchanged: %w", path, err)
	}
	// The file is written whole or not at all: once the write begins, a
	// deadline or signal waits for it (internal/stop).
	if ctx.Err() != nil || !stop.Commit(ctx) {
		return nil, nil, fmt.Errorf("writing %s: the file is unchanged: %w", path, context.Cause(ctx))
	}
	set, err := kustomization.SetDigests(path, digests)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range set {
		changes = append(changes, fmt.Sprintf("%s: %s", path, c))
	}
	return changes, nil, nil
}

// reached renders dir with the digests set on its kustomization (in
// memory, before the write) and fails when an image of a repository the
// write pins is still without digest: the kustomization's
// images: do not reach it (an image in a field kustomize's images
// transformer does not edit, a render kustomize does not pass through it),
// so the write would pin part of the render only.
func (s *session) reached(ctx context.Context, dir string, helmCmd string, extra []images.PodSpecPath, digests map[string]string) error {
	end := stop.Doing(ctx, "rendering "+dir+" with the digests to write")
	opts := s.renderOptions()
	opts.EnableHelm, opts.HelmCommand = s.o.Helm.EnableHelm, helmCmd
	opts.EditTop = kustomization.Edit(digests)
	res, err := render.Kustomize(dir, opts)
	end()
	if err != nil {
		return fmt.Errorf("rendering %s with the digests to write: %w", dir, err)
	}
	var missed []string
	for repo := range kustomization.UnpinnedRepos(res.Resources, extra) {
		if digests[repo] != "" {
			missed = append(missed, repo)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	slices.Sort(missed)
	return fmt.Errorf("kustomize's images: would not pin every image of the render: %s still render(s) without digest after the write; pin the render instead (kubectl gate pin -k %s, or the Pin KRM function), or, for an image field of a custom resource, name it in the kustomization's configurations: (images: [{kind: Prometheus, path: spec/image}])",
		strings.Join(missed, ", "), dir)
}

// resolveCauses groups image-resolve findings by cause: one line per cause
// with how many references it hit and which, so a registry that is down
// reads as one line, not one per image.
func resolveCauses(failed []finding.Finding) string {
	type group struct {
		cause string
		refs  []string
	}
	var groups []*group
	byCause := map[string]*group{}
	for _, f := range failed {
		ref := ""
		if f.Field != nil {
			ref = fmt.Sprint(f.Field.CurrentValue)
		}
		cause := resolveCause(f.Message)
		g := byCause[cause]
		if g == nil {
			g = &group{cause: cause}
			byCause[cause] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.refs, ref) {
			g.refs = append(g.refs, ref)
		}
	}
	refs := 0
	for _, g := range groups {
		refs += len(g.refs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d image reference(s) could not be resolved (%d finding(s))", refs, len(failed))
	for _, g := range groups {
		fmt.Fprintf(&b, "\n  %d× %s: %s", len(g.refs), g.cause, strings.Join(g.refs, ", "))
	}
	return b.String()
}

var (
	resolvingPrefix = regexp.MustCompile(`^container "[^"]*": (resolving "[^"]*": )?`)
	urlPath         = regexp.MustCompile(`(https?://[^/\s"]+)/[^\s"]*[^\s":,;]`)
)

// resolveCause is a finding's registry error without what names one
// reference (the container, the reference, the URL path), so identical
// failures group.
func resolveCause(msg string) string {
	return urlPath.ReplaceAllString(resolvingPrefix.ReplaceAllString(msg, ""), "$1/…")
}
