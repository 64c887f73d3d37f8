package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/kustomization"
)

// writeKustomization renders dir, resolves its images and writes the
// digests of the images its source left unpinned into the kustomization's
// images: entries (internal/kustomization), printing each change.
//
// When images could not be resolved it returns their image-resolve findings
// (to print with the report) and an error that groups them by cause.
func writeKustomization(ctx context.Context, o *options, r *runner, errOut io.Writer) ([]finding.Finding, error) {
	dir := o.writeKustomization
	path, err := kustomization.File(dir)
	if err != nil {
		return nil, err
	}
	// With --enable-helm, helmCharts: render with the same helm command as
	// -k; kustomize's images transformer applies the written entries to
	// their output too.
	helmCmd, cleanup, helmErr := o.helm.command()
	defer cleanup()
	u := renderUnit(ctx, dir, o, helmCmd, helmErr)
	if u.err != nil {
		return nil, u.err
	}
	spec, err := specFor(u, r.base, o)
	if err != nil {
		return nil, err
	}
	res, err := r.resolvers.For(ctx, spec, u.resources)
	if err != nil {
		return nil, err
	}
	extra := images.ConfiguredPaths(spec)
	unpinned := kustomization.UnpinnedRepos(u.resources, extra)
	rep, err := gate.Run(ctx, u.resources, gate.Options{Config: spec, Pin: true}, gate.Deps{Resolver: res, Version: r.version})
	if err != nil {
		return nil, err
	}
	if rep.NoVerdict() {
		var failed []finding.Finding
		for _, f := range rep.Findings {
			if f.NoVerdict {
				f.Input = "--write-kustomization " + dir
				failed = append(failed, f)
			}
		}
		return failed, fmt.Errorf("writing %s: the file is unchanged: %s", path, resolveCauses(failed))
	}
	// The file is written whole or not at all: once the write begins, a
	// deadline or signal waits for it (stop.go).
	if ctx.Err() != nil || !commit(ctx) {
		return nil, fmt.Errorf("writing %s: the file is unchanged: %w", path, context.Cause(ctx))
	}
	original, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	digests := kustomization.PinnedDigests(u.resources, extra, unpinned)
	changes, err := kustomization.SetDigests(path, digests)
	if err != nil {
		return nil, err
	}
	if err := reached(ctx, dir, o, helmCmd, extra, digests); err != nil {
		if rerr := kustomization.Restore(path, original); rerr != nil {
			return nil, fmt.Errorf("%w; restoring %s: %w", err, path, rerr)
		}
		return nil, fmt.Errorf("writing %s: the file is unchanged: %w", path, err)
	}
	for _, c := range changes {
		fmt.Fprintf(errOut, "%s: %s\n", path, c)
	}
	return nil, nil
}

// reached renders dir again after the write and fails when an image of a
// repository the write pinned is still without digest: the kustomization's
// images: do not reach it (an image in a field kustomize's images
// transformer does not edit, a render kustomize does not pass through it),
// so the write would pin part of the render only.
func reached(ctx context.Context, dir string, o *options, helmCmd string, extra []images.PodSpecPath, digests map[string]string) error {
	u := renderUnit(ctx, dir, o, helmCmd, nil)
	if u.err != nil {
		return fmt.Errorf("rendering %s after writing the digests: %w", dir, u.err)
	}
	var missed []string
	for repo := range kustomization.UnpinnedRepos(u.resources, extra) {
		if digests[repo] != "" {
			missed = append(missed, repo)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	slices.Sort(missed)
	return fmt.Errorf("kustomize's images: would not pin every image of the render: %s still render(s) without digest after the write; pin the render instead (kubectl gate pin -k %s, or the Pin KRM function)",
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
