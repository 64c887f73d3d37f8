package render

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// argoKustomize is an Argo CD Application's spec.source.kustomize: the
// fields that change the render. version, kubeVersion and apiVersions pick
// tools and are ignored here.
type argoKustomize struct {
	NamePrefix              string            `json:"namePrefix"`
	NameSuffix              string            `json:"nameSuffix"`
	Namespace               string            `json:"namespace"`
	Images                  []string          `json:"images"`
	Replicas                []argoReplica     `json:"replicas"`
	CommonLabels            map[string]string `json:"commonLabels"`
	CommonAnnotations       map[string]string `json:"commonAnnotations"`
	ForceCommonLabels       bool              `json:"forceCommonLabels"`
	ForceCommonAnnotations  bool              `json:"forceCommonAnnotations"`
	LabelWithoutSelector    bool              `json:"labelWithoutSelector"`
	LabelIncludeTemplates   bool              `json:"labelIncludeTemplates"`
	Patches                 []types.Patch     `json:"patches"`
	Components              []string          `json:"components"`
	IgnoreMissingComponents bool              `json:"ignoreMissingComponents"`
}

type argoReplica struct {
	Name  string          `json:"name"`
	Count json.RawMessage `json:"count"` // an int or a string, as Argo CD allows
}

// ArgoKustomizeEdit returns an Options.EditTop that applies an Application's
// spec.source.kustomize to the top-level kustomization of dir the way Argo
// CD does: it runs `kustomize edit set nameprefix|namesuffix|image|replicas|
// namespace` and `kustomize edit add label|annotation|component` in the
// source directory, then `kustomize build`. So the Application's namespace
// replaces the overlay's, its namePrefix replaces the overlay's prefix, and
// an image entry replaces the overlay's entry of the same name — which an
// outer overlay would not do. A nil or empty map gives a nil edit.
func ArgoKustomizeEdit(spec *yaml.RNode, dir string) (func(*yaml.RNode) error, error) {
	if spec == nil || len(spec.Content()) == 0 {
		return nil, nil
	}
	s, err := spec.String()
	if err != nil {
		return nil, fmt.Errorf("reading spec.source.kustomize: %w", err)
	}
	var ak argoKustomize
	if err := sigsyaml.Unmarshal([]byte(s), &ak); err != nil {
		return nil, fmt.Errorf("reading spec.source.kustomize: %w", err)
	}
	return func(node *yaml.RNode) error { return editKustomization(node, &ak, dir) }, nil
}

// ArgoKustomizeImages says where each images entry of an Application's
// spec.source.kustomize (spec) is, by the repository it sets (as the
// kustomization's images: entry the edit writes produces it): the
// Application's file ("" when a render made the Application) and, where
// lines says its nodes' lines are the file's, the entry's line. by names
// the entries' field. Nil without entries.
func ArgoKustomizeImages(spec *yaml.RNode, file string, lines bool, by string) map[string]manifest.ImageSource {
	if spec == nil {
		return nil
	}
	list := spec.Field("images")
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	out := map[string]manifest.ImageSource{}
	for i, e := range list.Value.YNode().Content {
		var k types.Kustomization
		if e.Kind != yaml.ScalarNode || setImage(&k, e.Value) != nil {
			continue // the edit reports it
		}
		repo := k.Images[0].NewName
		if repo == "" {
			repo = k.Images[0].Name
		}
		src := manifest.ImageSource{File: file, By: fmt.Sprintf("%s[%d]", by, i)}
		if file != "" {
			src.By += " in " + file
		}
		if lines {
			src.Line = e.Line
		}
		out[repo] = src
	}
	return out
}

// editKustomization round-trips the kustomization through kustomize's own
// type, as `kustomize edit` does, and applies the Application's fields.
func editKustomization(node *yaml.RNode, ak *argoKustomize, dir string) error {
	text, err := node.String()
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal([]byte(text)); err != nil {
		return err
	}
	k.FixKustomization()
	setString(&k.NamePrefix, ak.NamePrefix)
	setString(&k.NameSuffix, ak.NameSuffix)
	setString(&k.Namespace, ak.Namespace)
	for _, img := range ak.Images {
		if err := setImage(&k, img); err != nil {
			return err
		}
	}
	for _, r := range ak.Replicas {
		if err := setReplicas(&k, r); err != nil {
			return err
		}
	}
	if err := addLabels(&k, ak); err != nil {
		return err
	}
	if err := addAll(&k.CommonAnnotations, ak.CommonAnnotations, ak.ForceCommonAnnotations, "annotation"); err != nil {
		return err
	}
	k.Patches = append(k.Patches, ak.Patches...)
	for _, c := range ak.Components {
		if _, err := os.Stat(filepath.Join(dir, c)); err != nil && ak.IgnoreMissingComponents {
			continue
		}
		k.Components = append(k.Components, c)
	}
	out, err := sigsyaml.Marshal(&k)
	if err != nil {
		return err
	}
	edited, err := yaml.Parse(string(out))
	if err != nil {
		return err
	}
	*node.YNode() = *edited.YNode()
	return nil
}

func setString(field *string, v string) {
	if v != "" {
		*field = v
	}
}

// setImage is `kustomize edit set image ARG`: [name=]newName[:tag][@digest]
// replaces the entry of that name.
func setImage(k *types.Kustomization, arg string) error {
	key, value := "", arg
	if i := strings.IndexByte(arg, '='); i >= 0 {
		key, value = arg[:i], arg[i+1:]
	}
	name, tag, digest := util.SplitImageName(value)
	if name == "" {
		return fmt.Errorf("image %q: invalid format", arg)
	}
	img := types.Image{Name: name, NewTag: tag, Digest: digest}
	if key != "" {
		img.Name, img.NewName = key, name
	}
	for i := range k.Images {
		if k.Images[i].Name == img.Name {
			k.Images[i] = img
			return nil
		}
	}
	k.Images = append(k.Images, img)
	return nil
}

// setReplicas is `kustomize edit set replicas NAME=COUNT`.
func setReplicas(k *types.Kustomization, r argoReplica) error {
	var n int64
	if err := json.Unmarshal(r.Count, &n); err != nil {
		var s string
		if json.Unmarshal(r.Count, &s) != nil {
			return fmt.Errorf("replicas %s: count %s is not a number", r.Name, r.Count)
		}
		if n, err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("replicas %s: count %q is not a number", r.Name, s)
		}
	}
	for i := range k.Replicas {
		if k.Replicas[i].Name == r.Name {
			k.Replicas[i].Count = n
			return nil
		}
	}
	k.Replicas = append(k.Replicas, types.Replica{Name: r.Name, Count: n})
	return nil
}

// addLabels is `kustomize edit add label [--force] [--without-selector
// [--include-templates]]`. The plain form adds to commonLabels; it is written
// as the equivalent labels entry (selectors and templates included), so the
// build does not print kustomize's commonLabels deprecation warning.
func addLabels(k *types.Kustomization, ak *argoKustomize) error {
	if len(ak.CommonLabels) == 0 {
		return nil
	}
	want := types.Label{IncludeSelectors: !ak.LabelWithoutSelector, IncludeTemplates: ak.LabelIncludeTemplates && ak.LabelWithoutSelector}
	if want.IncludeSelectors {
		for key := range ak.CommonLabels {
			if _, ok := k.CommonLabels[key]; ok && !ak.ForceCommonLabels {
				return fmt.Errorf("label %s already in kustomization file (Argo CD's `kustomize edit add label` fails without force)", key)
			}
		}
	}
	for i, l := range k.Labels {
		if l.IncludeSelectors == want.IncludeSelectors && l.IncludeTemplates == want.IncludeTemplates && len(l.FieldSpecs) == 0 {
			return addAll(&k.Labels[i].Pairs, ak.CommonLabels, ak.ForceCommonLabels, "label")
		}
	}
	want.Pairs = ak.CommonLabels
	k.Labels = append(k.Labels, want)
	return nil
}

// addAll adds pairs to a map; an existing key is an error without force,
// as with `kustomize edit add` (Argo CD passes --force only when asked).
func addAll(m *map[string]string, pairs map[string]string, force bool, what string) error {
	if len(pairs) == 0 {
		return nil
	}
	if *m == nil {
		*m = map[string]string{}
	}
	for key, v := range pairs {
		if _, ok := (*m)[key]; ok && !force {
			return fmt.Errorf("%s %s already in kustomization file (Argo CD's `kustomize edit add %s` fails without force)", what, key, what)
		}
		(*m)[key] = v
	}
	return nil
}
