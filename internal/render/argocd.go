package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// ArgoSource is one Argo CD Application source to render from a checkout of
// its repository, as Argo CD's repo-server would.
type ArgoSource struct {
	// Dir is the source directory on disk: the checkout plus spec.source.path.
	Dir string
	// App is the Application's name, for .argocd-source-<app>.yaml.
	App   string
	Chart string
	// Helm, Plugin, Kustomize and Directory are the source's fields of those
	// names (nil or false when absent).
	Helm, Plugin         bool
	Kustomize, Directory *yaml.RNode
	// HelmSpec is the source's helm: map (nil when absent); Namespace the
	// Application's destination namespace, the release namespace.
	HelmSpec  *yaml.RNode
	Namespace string
	// Root is the checkout the source lies in; Refs maps the ref: names of
	// the Application's other sources that are this checkout's repository
	// to its root at each one's own targetRevision (the checkout, or a
	// worktree of that revision), for "$ref/…" Helm value files. RefWhy
	// says why a ref source of this repository cannot be read (its
	// revision is not in the local history): a values file from it fails
	// the render, never falls back to the checkout.
	Root   string
	Refs   map[string]string
	RefWhy map[string]string
	// AppFile is the file the Application was read from, as the report
	// names it ("" for an Application a render made), and Field the
	// source's field path (spec.source, spec.sources[1]): where its
	// kustomize overrides are written. AppLines: its nodes' lines are
	// AppFile's (not so for an ApplicationSet's generated Application).
	AppFile, Field string
	AppLines       bool
}

// SkipError says that a source is of a kind the gate does not render (a Helm
// chart, a plugin, jsonnet); the caller reports it, never passes it.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return e.Reason }

// RenderArgo renders a source the way Argo CD would: the parameter files
// .argocd-source.yaml and .argocd-source-<app>.yaml in the directory are
// merged into the source first (argocd-image-updater writes them); then the
// type is the one the source's fields name, else a kustomization in the
// directory means Kustomize, a Chart.yaml Helm, anything else a directory of
// plain manifests. Kustomize sources get the Application's kustomize: fields
// applied as `kustomize edit` would (ArgoKustomizeEdit).
func RenderArgo(s ArgoSource, opts Options) (*Result, error) {
	if st, err := os.Stat(s.Dir); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", s.Dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("rendering %s: not a directory", s.Dir)
	}
	if s.Root != "" {
		// As Argo CD: a checkout with a symlink out of it is not rendered.
		if err := CheckSymlinks(s.Root); err != nil {
			return nil, err
		}
	}
	if err := s.mergeParameterFiles(); err != nil {
		return nil, err
	}
	typ, err := s.sourceType()
	if err != nil {
		return nil, err
	}
	switch typ {
	case "Helm":
		return argoHelm(s, opts)
	case "Plugin":
		return nil, &SkipError{Reason: "a config management plugin renders it"}
	case "Kustomize":
		edit, err := ArgoKustomizeEdit(s.Kustomize, s.Dir)
		if err != nil {
			return nil, err
		}
		opts.EditTop = edit
		opts.argo = true
		opts.EditImages = ArgoKustomizeImages(s.Kustomize, s.AppFile, s.AppLines, "Application "+s.App+" "+s.Field+".kustomize.images")
		if s.Root != "" {
			// Rendered from the checkout alone, as the repo-server does.
			opts.Root, opts.Confined = s.Root, true
		}
		return Kustomize(s.Dir, opts)
	}
	resources, err := s.directoryManifests(opts.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return &Result{Dir: s.Dir, Resources: resources}, nil
}

// sourceType is Argo CD's choice of tool for the source.
func (s *ArgoSource) sourceType() (string, error) {
	var named []string
	for _, t := range []struct {
		set  bool
		name string
	}{{s.Kustomize != nil, "Kustomize"}, {s.Helm, "Helm"}, {s.Directory != nil, "Directory"}, {s.Plugin, "Plugin"}} {
		if t.set {
			named = append(named, t.name)
		}
	}
	switch {
	case len(named) > 1:
		return "", fmt.Errorf("rendering %s: the source names several types (%s); Argo CD rejects it", s.Dir, strings.Join(named, ", "))
	case len(named) == 1:
		return named[0], nil
	case s.Chart != "":
		return "Helm", nil
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(s.Dir, name)); err == nil {
			return "Kustomize", nil
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "Chart.yaml")); err == nil {
		return "Helm", nil
	}
	return "Directory", nil
}

// boundary is the filesystem boundary of the source's reads: the checkout.
func (s *ArgoSource) boundary() *fsbound.Root {
	root := s.Root
	if root == "" {
		root = fsbound.For(s.Dir)
	}
	r, err := fsbound.New(root, 0)
	if err != nil {
		r, _ = fsbound.New(s.Dir, 0)
	}
	return r
}

// mergeParameterFiles applies .argocd-source.yaml, then
// .argocd-source-<app>.yaml, as JSON merge patches on the source.
func (s *ArgoSource) mergeParameterFiles() error {
	for _, name := range []string{".argocd-source.yaml", ".argocd-source-" + s.App + ".yaml"} {
		path := filepath.Join(s.Dir, name)
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			continue
		}
		data, err := s.boundary().ReadFile(path)
		if err != nil {
			return err
		}
		patch, err := yaml.Parse(string(data))
		if err != nil {
			return fmt.Errorf("parsing %s: %w", path, err)
		}
		s.Kustomize = mergePatch(s.Kustomize, patch.Field("kustomize"))
		s.Directory = mergePatch(s.Directory, patch.Field("directory"))
		s.Helm = s.Helm || patch.Field("helm") != nil
		s.HelmSpec = mergePatch(s.HelmSpec, patch.Field("helm"))
		s.Plugin = s.Plugin || patch.Field("plugin") != nil
	}
	return nil
}

// mergePatch applies one field of a JSON merge patch (RFC 7396) to a map.
func mergePatch(dst *yaml.RNode, f *yaml.MapNode) *yaml.RNode {
	if f == nil {
		return dst
	}
	if f.Value.IsNil() || f.Value.YNode().Kind != yaml.MappingNode || dst == nil {
		if f.Value.IsNil() {
			return nil
		}
		return f.Value.Copy()
	}
	out := dst.Copy()
	_ = f.Value.VisitFields(func(pf *yaml.MapNode) error {
		key := yaml.GetValue(pf.Key)
		var cur *yaml.RNode
		if existing := out.Field(key); existing != nil {
			cur = existing.Value
		}
		if merged := mergePatch(cur, pf); merged == nil {
			_ = out.PipeE(yaml.Clear(key))
		} else {
			_ = out.PipeE(yaml.SetField(key, merged))
		}
		return nil
	})
	return out
}
