// Package kustomization edits a kustomization file in place the way a
// person would: `kubectl gate pin --write-kustomization DIR` writes the
// digests it resolved into the images: entries, keeping the rest of the
// file, its comments and its indentation, and replaces the file atomically
// — on any failure it is left byte-identical.
package kustomization

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/atomicfile"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// File returns the kustomization file of dir, under any name kustomize
// recognizes.
func File(dir string) (string, error) {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("writing digests into %s: no kustomization file", dir)
}

// UnpinnedRepos lists the repositories that have an image without digest
// in a render.
func UnpinnedRepos(resources []*yaml.RNode, extra []images.PodSpecPath) map[string]bool {
	out := map[string]bool{}
	for _, obj := range resources {
		for _, c := range images.Find(obj, extra) {
			if ref, ok := images.Parse(c.Image); ok && !ref.HasDigest() {
				out[ref.Repository()] = true
			}
		}
	}
	return out
}

// PinnedDigests maps each repository of a pinned render to its digest,
// keeping only the repositories in only (those that were unpinned in the
// source: the others are pinned there already).
func PinnedDigests(resources []*yaml.RNode, extra []images.PodSpecPath, only map[string]bool) map[string]string {
	out := map[string]string{}
	for _, obj := range resources {
		for _, c := range images.Find(obj, extra) {
			ref, ok := images.Parse(c.Image)
			if ok && ref.ValidDigest() && only[ref.Repository()] {
				out[ref.Repository()] = ref.Digest
			}
		}
	}
	return out
}

// Change is one edit SetDigests made: an entry's digest set, or an entry
// added.
type Change struct {
	Repo, Digest string
	Added        bool
}

// String is the line the plugin prints for the change.
func (c Change) String() string {
	if c.Added {
		return fmt.Sprintf("images += {name: %s, digest: %s}", c.Repo, c.Digest)
	}
	return fmt.Sprintf("images[%s].digest = %s", c.Repo, c.Digest)
}

// SetDigests sets digest: on every images: entry of the kustomization at
// path whose resulting repository (newName, else name) is in digests, adds
// an entry for each other repository, and replaces the file atomically. It
// returns the changes it made, in file order then by repository.
func SetDigests(path string, digests map[string]string) ([]Change, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	node, err := yaml.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	// A document that is not a mapping (a bare tag, a scalar, a list) is no
	// kustomization; editing it would write an empty or broken file (found
	// by FuzzSetDigests).
	if node.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("parsing %s: the document is not a YAML mapping", path)
	}
	changes, err := setDigests(node, digests)
	if err != nil {
		return nil, fmt.Errorf("editing images: of %s: %w", path, err)
	}
	// Keep the file's own sequence indentation ("  - x" or "- x").
	style := yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(data)))
	out, err := yaml.MarshalWithOptions(node.Document(), &yaml.EncoderOptions{SeqIndent: style})
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", path, err)
	}
	return changes, atomicWrite(path, out)
}

// Edit is SetDigests's change to a kustomization, made on a parsed copy:
// a render given it (the renderer's EditTop) sees the file as SetDigests
// would write it, before anything is written.
func Edit(digests map[string]string) func(*yaml.RNode) error {
	return func(node *yaml.RNode) error {
		if _, err := setDigests(node, digests); err != nil {
			return fmt.Errorf("editing images: %w", err)
		}
		return nil
	}
}

func setDigests(node *yaml.RNode, digests map[string]string) ([]Change, error) {
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return nil, err
	}
	var changes []Change
	covered := map[string]bool{}
	entries, _ := list.Elements()
	for _, e := range entries {
		repo := entryRepo(e)
		covered[repo] = true
		if d, ok := digests[repo]; ok {
			if err := e.PipeE(yaml.SetField("digest", yaml.NewStringRNode(d))); err != nil {
				return nil, fmt.Errorf("setting the digest of %s: %w", repo, err)
			}
			changes = append(changes, Change{Repo: repo, Digest: d})
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
		// name first, then digest, as a person writes it (a Go map would
		// give the fields in random order).
		entry := yaml.NewMapRNode(nil)
		if err := entry.PipeE(yaml.SetField("name", yaml.NewStringRNode(repo))); err != nil {
			return nil, fmt.Errorf("adding %s: %w", repo, err)
		}
		if err := entry.PipeE(yaml.SetField("digest", yaml.NewStringRNode(digests[repo]))); err != nil {
			return nil, fmt.Errorf("adding %s: %w", repo, err)
		}
		if err := list.PipeE(yaml.Append(entry.YNode())); err != nil {
			return nil, fmt.Errorf("adding %s: %w", repo, err)
		}
		changes = append(changes, Change{Repo: repo, Digest: digests[repo], Added: true})
	}
	return changes, nil
}

// entryRepo is the repository an images: entry results in.
func entryRepo(e *yaml.RNode) string {
	if f := e.Field("newName"); f != nil {
		return yaml.GetValue(f.Value)
	}
	if f := e.Field("name"); f != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

// Restore puts back a kustomization file's former content, atomically:
// the caller undoes a write whose result it refuses.
func Restore(path string, data []byte) error { return atomicWrite(path, data) }

// atomicWrite replaces an existing kustomization file, keeping its mode.
func atomicWrite(path string, data []byte) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return atomicfile.Write(path, data, 0o644)
}
