package plugin

import (
	"context"
	"fmt"
	"io"

	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/kustomization"
	imagerules "github.com/kubectl-gate/kubectl-gate/internal/rules/images"
)

// writeKustomization renders dir, resolves its images and writes the
// digests of the images its source left unpinned into the kustomization's
// images: entries (internal/kustomization), printing each change.
func writeKustomization(ctx context.Context, o *options, r *runner, errOut io.Writer) error {
	dir := o.writeKustomization
	path, err := kustomization.File(dir)
	if err != nil {
		return err
	}
	u := renderUnit(dir, o)
	if u.err != nil {
		return u.err
	}
	spec, err := specFor(u, r.base, o)
	if err != nil {
		return err
	}
	res, err := r.resolvers.For(ctx, spec, u.resources)
	if err != nil {
		return err
	}
	extra := imagerules.PodSpecPaths(spec)
	unpinned := kustomization.UnpinnedRepos(u.resources, extra)
	rep, err := gate.Run(ctx, u.resources, gate.Options{Config: spec, Pin: true}, gate.Deps{Resolver: res, Version: r.version})
	if err != nil {
		return err
	}
	if rep.NoVerdict() {
		return fmt.Errorf("writing %s: some images could not be resolved; the file is unchanged", path)
	}
	changes, err := kustomization.SetDigests(path, kustomization.PinnedDigests(u.resources, extra, unpinned))
	for _, c := range changes {
		fmt.Fprintf(errOut, "%s: %s\n", path, c)
	}
	return err
}
