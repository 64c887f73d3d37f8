package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	imagerules "github.com/kubectl-gate/kubectl-gate/internal/rules/images"
)

// writeKustomization renders dir, resolves its images and writes their
// digests into the kustomization's images: entries — adding or updating
// `digest:`, keeping the rest of the file and its comments. The file is
// replaced atomically; on any failure it is left byte-identical.
func writeKustomization(ctx context.Context, o *options, r *runner, errOut io.Writer) error {
	dir := o.writeKustomization
	path, err := kustomizationFile(dir)
	if err != nil {
		return err
	}
	u := renderUnit(dir, o, "", nil)
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
	unpinned := unpinnedRepos(u.resources, spec)
	rep, err := gate.Run(ctx, u.resources, gate.Options{Config: spec, Pin: true}, gate.Deps{Resolver: res, Version: r.version})
	if err != nil {
		return err
	}
	if rep.NoVerdict() {
		return fmt.Errorf("writing %s: some images could not be resolved; the file is unchanged", path)
	}
	digests := pinnedDigests(u.resources, spec)
	for repo := range digests {
		if !unpinned[repo] {
			delete(digests, repo) // already pinned in the source
		}
	}
	return updateImages(path, digests, errOut)
}

func kustomizationFile(dir string) (string, error) {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("writing digests into %s: no kustomization file", dir)
}

// unpinnedRepos lists the repositories that have an image without digest.
func unpinnedRepos(resources []*yaml.RNode, spec *config.Spec) map[string]bool {
	out := map[string]bool{}
	for _, obj := range resources {
		for _, c := range images.Find(obj, imagerules.PodSpecPaths(spec)) {
			if ref, ok := images.Parse(c.Image); ok && !ref.HasDigest() {
				out[ref.Repository()] = true
			}
		}
	}
	return out
}

// pinnedDigests maps each repository in the pinned render to its digest.
func pinnedDigests(resources []*yaml.RNode, spec *config.Spec) map[string]string {
	out := map[string]string{}
	for _, obj := range resources {
		for _, c := range images.Find(obj, imagerules.PodSpecPaths(spec)) {
			ref, ok := images.Parse(c.Image)
			if !ok || !ref.ValidDigest() {
				continue
			}
			out[ref.Repository()] = ref.Digest
		}
	}
	return out
}

// updateImages sets digest: on every images: entry whose resulting
// repository was pinned, and writes the file atomically.
func updateImages(path string, digests map[string]string, errOut io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	node, err := yaml.Parse(string(data))
	if err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return fmt.Errorf("reading images: of %s: %w", path, err)
	}
	covered := map[string]bool{}
	entries, _ := list.Elements()
	for _, e := range entries {
		repo := ""
		if f := e.Field("newName"); f != nil {
			repo = yaml.GetValue(f.Value)
		} else if f := e.Field("name"); f != nil {
			repo = yaml.GetValue(f.Value)
		}
		covered[repo] = true
		if d, ok := digests[repo]; ok {
			if err := e.PipeE(yaml.SetField("digest", yaml.NewStringRNode(d))); err != nil {
				return fmt.Errorf("setting digest of %s in %s: %w", repo, path, err)
			}
			fmt.Fprintf(errOut, "%s: images[%s].digest = %s\n", path, repo, d)
		}
	}
	var add []string
	for repo := range digests {
		if !covered[repo] {
			add = append(add, repo)
		}
	}
	slices.Sort(add)
	for _, repo := range add {
		entry := yaml.NewMapRNode(&map[string]string{"name": repo, "digest": digests[repo]})
		if err := list.PipeE(yaml.Append(entry.YNode())); err != nil {
			return fmt.Errorf("adding %s to images: of %s: %w", repo, path, err)
		}
		fmt.Fprintf(errOut, "%s: images += {name: %s, digest: %s}\n", path, repo, digests[repo])
	}
	// Keep the file's own sequence indentation ("  - x" or "- x").
	style := yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(data)))
	out, err := yaml.MarshalWithOptions(node.Document(), &yaml.EncoderOptions{SeqIndent: style})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return atomicWrite(path, out)
}

// atomicWrite replaces path with data through a temp file and a rename, so
// a reader sees the old file or the new one, never half of either.
func atomicWrite(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
