package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// writeKustomization renders dir, resolves its images and writes their
// digests into the kustomization's images: entries — adding or updating
// `digest:`, keeping the rest of the file and its comments. The file is
// replaced atomically; on any failure it is left byte-identical.
//
// When images could not be resolved it returns their image-resolve findings
// (to print with the report) and an error that groups them by cause.
func writeKustomization(ctx context.Context, o *options, r *runner, errOut io.Writer) ([]finding.Finding, error) {
	dir := o.writeKustomization
	path, err := kustomizationFile(dir)
	if err != nil {
		return nil, err
	}
	u := renderUnit(dir, o)
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
	unpinned := unpinnedRepos(u.resources, spec)
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
	digests := pinnedDigests(u.resources, spec)
	for repo := range digests {
		if !unpinned[repo] {
			delete(digests, repo) // already pinned in the source
		}
	}
	return nil, updateImages(path, digests, errOut)
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
		for _, c := range images.Find(obj, images.ConfiguredPaths(spec)) {
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
		for _, c := range images.Find(obj, images.ConfiguredPaths(spec)) {
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
