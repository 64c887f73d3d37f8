package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Chart renders a local chart directory as `helm template` would (README
// "Use: the kubectl plugin", --chart). Objects name their template file.
func Chart(ctx context.Context, dir string, o helm.Options) (*Result, error) {
	resources, err := helm.Render(ctx, dir, dir, o)
	if err != nil {
		return nil, err
	}
	return &Result{Dir: dir, Resources: resources}, nil
}

// argoHelm renders a Helm source as Argo CD's repo-server does: `helm
// template` of the chart directory with the source's helm: fields.
func argoHelm(s ArgoSource, opts Options) (*Result, error) {
	o, err := ArgoHelmOptions(s)
	if err != nil {
		return nil, err
	}
	o.RepoCache = opts.HelmRepoCache
	if o.KubeVersion == "" {
		o.KubeVersion = opts.KubeVersion
	}
	// Everything the chart reads stays in the checkout (internal/fsbound).
	o.Root, o.MaxFileBytes = s.Root, opts.MaxFileBytes
	return Chart(context.Background(), s.Dir, o)
}

// ArgoHelmOptions maps an Application source's helm: fields to helm
// options, as Argo CD's repo-server builds its `helm template` command:
// release name helm.releaseName else the Application's name; namespace the
// destination namespace; valueFiles relative to the source directory, or
// "$ref/…" relative to the checkout a ref source names (a missing file is an
// error unless ignoreMissingValueFiles); then values or valuesObject (the
// latter wins), parameters (--set, or --set-string with forceString),
// fileParameters (--set-file); CRDs included unless skipCrds.
//
// Argo CD also passes the destination cluster's version and API versions;
// without a cluster, the render's Options.KubeVersion (the version the gate
// validates for) stands in for the first unless helm.kubeVersion is set,
// and helm's default API versions unless helm.apiVersions is.
func ArgoHelmOptions(s ArgoSource) (helm.Options, error) {
	o := helm.Options{ReleaseName: s.App, Namespace: s.Namespace, IncludeCRDs: true}
	h := s.HelmSpec
	if h == nil {
		return o, nil
	}
	if v := manifest.Str(h, "releaseName"); v != "" {
		o.ReleaseName = v
	}
	o.KubeVersion = manifest.Str(h, "kubeVersion")
	o.IncludeCRDs = !boolField(h, "skipCrds")
	o.SkipSchemaValidation = boolField(h, "skipSchemaValidation")
	o.SkipTests = boolField(h, "skipTests")
	o.APIVersions = stringList(h, "apiVersions")
	ignoreMissing := boolField(h, "ignoreMissingValueFiles")
	for _, f := range stringList(h, "valueFiles") {
		p, err := s.valuePath(f)
		if err != nil {
			return o, err
		}
		if _, err := os.Stat(p); err != nil {
			if ignoreMissing && os.IsNotExist(err) {
				continue
			}
			return o, fmt.Errorf("Helm valueFiles %q: %w", f, err)
		}
		o.ValueFiles = append(o.ValueFiles, p)
	}
	if inline, err := inlineValues(h); err != nil {
		return o, err
	} else if inline != nil {
		o.InlineValues = [][]byte{inline}
	}
	if err := s.parameters(h, &o); err != nil {
		return o, err
	}
	return o, nil
}

// valuePath resolves a valueFiles entry: "$ref/path" against the checkout
// of the ref source, else relative to the source directory. Like Argo CD,
// a path may not leave its repository, and a URL is not fetched.
func (s ArgoSource) valuePath(f string) (string, error) {
	if strings.Contains(f, "://") {
		return "", fmt.Errorf("Helm valueFiles %q: a remote values file; the gate does not fetch", f)
	}
	if ref, rest, ok := strings.Cut(f, "/"); ok && strings.HasPrefix(ref, "$") {
		root, known := s.Refs[strings.TrimPrefix(ref, "$")]
		if why, ok := s.RefWhy[strings.TrimPrefix(ref, "$")]; ok && !known {
			return "", fmt.Errorf("Helm valueFiles %q: the ref source %s cannot be read: %s", f, strings.TrimPrefix(ref, "$"), why)
		}
		if !known {
			return "", fmt.Errorf("Helm valueFiles %q: no source with ref %s in this checkout", f, strings.TrimPrefix(ref, "$"))
		}
		if !filepath.IsLocal(filepath.FromSlash(rest)) {
			return "", fmt.Errorf("Helm valueFiles %q leaves the repository", f)
		}
		return filepath.Join(root, filepath.FromSlash(rest)), nil
	}
	p := filepath.Join(s.Dir, filepath.FromSlash(f))
	if s.Root != "" {
		if rel, err := filepath.Rel(s.Root, p); err != nil || !filepath.IsLocal(rel) {
			return "", fmt.Errorf("Helm valueFiles %q leaves the repository", f)
		}
	}
	return p, nil
}

// inlineValues is helm.valuesObject, else helm.values, as YAML.
func inlineValues(h *yaml.RNode) ([]byte, error) {
	if f := h.Field("valuesObject"); f != nil && !f.Value.IsNil() {
		s, err := f.Value.String()
		if err != nil {
			return nil, fmt.Errorf("encoding helm.valuesObject: %w", err)
		}
		return []byte(s), nil
	}
	if v := manifest.Str(h, "values"); strings.TrimSpace(v) != "" {
		return []byte(v), nil
	}
	return nil, nil
}

func (s ArgoSource) parameters(h *yaml.RNode, o *helm.Options) error {
	if list := h.Field("parameters"); list != nil {
		elems, _ := list.Value.Elements()
		for _, e := range elems {
			kv := manifest.Str(e, "name") + "=" + manifest.Str(e, "value")
			if boolField(e, "forceString") {
				o.SetString = append(o.SetString, kv)
			} else {
				o.Set = append(o.Set, kv)
			}
		}
	}
	if list := h.Field("fileParameters"); list != nil {
		elems, _ := list.Value.Elements()
		for _, e := range elems {
			p, err := s.valuePath(manifest.Str(e, "path"))
			if err != nil {
				return fmt.Errorf("helm.fileParameters %s: %w", manifest.Str(e, "name"), err)
			}
			o.SetFile = append(o.SetFile, manifest.Str(e, "name")+"="+p)
		}
	}
	return nil
}

func boolField(n *yaml.RNode, name string) bool {
	return manifest.Str(n, name) == "true"
}

func stringList(n *yaml.RNode, name string) []string {
	f := n.Field(name)
	if f == nil {
		return nil
	}
	var out []string
	for _, e := range f.Value.YNode().Content {
		out = append(out, e.Value)
	}
	return out
}

// relativizeHelmSources rewrites the absolute template paths the gate's
// helm command stamps during a kustomize helmCharts: render to paths
// relative to the working directory, as findings name files.
func relativizeHelmSources(resources []*yaml.RNode) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	for _, r := range resources {
		p := yamlpath.Annotation(r.YNode(), manifest.AnnoHelmSource)
		if !filepath.IsAbs(p) {
			continue
		}
		if rel, err := filepath.Rel(wd, p); err == nil {
			yamlpath.SetAnnotation(r.YNode(), manifest.AnnoHelmSource, filepath.ToSlash(rel))
		}
	}
}

// HelmOptions returns the helm options Argo CD would render the source
// with, its parameter files merged first; ok is false when Argo CD would
// not render the source with Helm.
func (s ArgoSource) HelmOptions() (o helm.Options, ok bool, err error) {
	if err := s.mergeParameterFiles(); err != nil {
		return o, false, err
	}
	typ, err := s.sourceType()
	if err != nil || typ != "Helm" {
		return o, false, err
	}
	o, err = ArgoHelmOptions(s)
	return o, err == nil, err
}

// WithHelmParameter returns a copy of the source with one more
// helm.parameters entry, as a user adds it to the Application. Like Argo
// CD, a parameter file that sets helm.parameters still replaces the list.
func (s ArgoSource) WithHelmParameter(name, value string) ArgoSource {
	h := yaml.NewMapRNode(nil)
	if s.HelmSpec != nil {
		h = s.HelmSpec.Copy()
	}
	entry := yaml.NewMapRNode(nil)
	_ = entry.PipeE(yaml.SetField("name", yaml.NewStringRNode(name)))
	_ = entry.PipeE(yaml.SetField("value", yaml.NewStringRNode(value)))
	if f := h.Field("parameters"); f != nil && f.Value.YNode().Kind == yaml.SequenceNode {
		f.Value.YNode().Content = append(f.Value.YNode().Content, entry.YNode())
	} else {
		_ = h.PipeE(yaml.SetField("parameters", yaml.NewListRNode()))
		list := h.Field("parameters").Value
		list.YNode().Content = append(list.YNode().Content, entry.YNode())
	}
	s.HelmSpec, s.Helm = h, true
	return s
}
