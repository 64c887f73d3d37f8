package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// lifecycle is one built-in kind's prerelease lifecycle, as the API server
// reads it (k8s.io/api's APILifecycle* methods) to warn about deprecated
// APIs and stop serving removed ones.
type lifecycle struct {
	Introduced  string `json:"introduced,omitempty"`
	Deprecated  string `json:"deprecated,omitempty"`
	Removed     string `json:"removed,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

type (
	introducedAPI  interface{ APILifecycleIntroduced() (int, int) }
	deprecatedAPI  interface{ APILifecycleDeprecated() (int, int) }
	removedAPI     interface{ APILifecycleRemoved() (int, int) }
	replacementAPI interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

func genLifecycle(out string) error {
	all := map[string]map[string]lifecycle{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			continue
		}
		var lc lifecycle
		if o, ok := obj.(introducedAPI); ok {
			lc.Introduced = release(o.APILifecycleIntroduced())
		}
		if o, ok := obj.(deprecatedAPI); ok {
			lc.Deprecated = release(o.APILifecycleDeprecated())
		}
		if o, ok := obj.(removedAPI); ok {
			lc.Removed = release(o.APILifecycleRemoved())
		}
		if o, ok := obj.(replacementAPI); ok {
			if r := o.APILifecycleReplacement(); !r.Empty() {
				// k8s.io/api tags networking.k8s.io/v1beta1 IngressClass
				// with the List kind as its replacement; a kind is
				// replaced by a kind, never by its list.
				if !strings.HasSuffix(gvk.Kind, "List") {
					r.Kind = strings.TrimSuffix(r.Kind, "List")
				}
				lc.Replacement = r.GroupVersion().String() + " " + r.Kind
			}
		}
		if lc == (lifecycle{}) {
			continue
		}
		gv := gvk.GroupVersion().String()
		if all[gv] == nil {
			all[gv] = map[string]lifecycle{}
		}
		all[gv][gvk.Kind] = lc
	}
	addRemovedKinds(all)
	body, err := marshal(all)
	if err != nil {
		return err
	}
	file := filepath.Join(out, "lifecycle.json")
	return writeFile(file, body)
}

func release(major, minor int) string {
	if major == 0 && minor == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// genCRDs reads every CustomResourceDefinition under DIR of MODULE@VERSION
// (MODULE@VERSION:DIR:FILE+FILE… for only the files named: a project whose
// CRD directory also ships other projects' CRDs) and writes them,
// descriptions dropped, one per line.
func genCRDs(out, spec string) (string, error) {
	modVersion, dir, ok := strings.Cut(spec, ":")
	if !ok {
		return "", fmt.Errorf("parsing -crds %q: want MODULE@VERSION:DIR[:FILE+FILE…]", spec)
	}
	var only []string
	if d, files, ok := strings.Cut(dir, ":"); ok {
		dir, only = d, strings.Split(files, "+")
	}
	z, err := moduleZip(modVersion)
	if err != nil {
		return "", err
	}
	defer z.Close()
	prefix := modVersion + "/" + strings.Trim(dir, "/") + "/"
	var crds []map[string]any
	var names []string
	for _, f := range z.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || strings.Contains(rel, "/") || (path.Ext(rel) != ".yaml" && path.Ext(rel) != ".yml") {
			continue
		}
		if only != nil && !slices.Contains(only, rel) {
			continue
		}
		raw, err := readZipFile(f)
		if err != nil {
			return "", err
		}
		found, err := decodeCRDs(raw)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", f.Name, err)
		}
		for _, crd := range found {
			stripCRD(crd)
			crds = append(crds, crd)
			names = append(names, str(crd["metadata"].(map[string]any)["name"]))
		}
	}
	if len(crds) == 0 {
		return "", fmt.Errorf("reading CRDs under %s: %w", prefix, errNoFiles)
	}
	// One line per CRD, "group/Kind<TAB>JSON", so a reader indexes the set
	// without decoding megabytes of schema it may never use.
	var body []byte
	for _, crd := range crds {
		spec, _ := crd["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		line, err := marshal(crd)
		if err != nil {
			return "", err
		}
		body = append(body, str(spec["group"])+"/"+str(names["kind"])+"\t"...)
		body = append(body, line...)
	}
	mod, version, _ := strings.Cut(modVersion, "@")
	name := path.Base(mod)
	if strings.HasPrefix(name, "v") && strings.Count(mod, "/") > 2 {
		name = path.Base(path.Dir(mod))
	}
	file := "crds-" + name + ".tsv.zst"
	if err := writeZstd(filepath.Join(out, file), body); err != nil {
		return "", err
	}
	from := dir
	if only != nil {
		from += " " + strings.Join(only, ", ")
	}
	return fmt.Sprintf("%s\t%s@%s %s (%d CRDs: %s)", file, mod, version, from, len(crds), strings.Join(names, ", ")), nil
}

func decodeCRDs(raw []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []map[string]any
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding YAML: %w", err)
		}
		if doc["kind"] == "CustomResourceDefinition" {
			out = append(out, doc)
		}
	}
}

func stripCRD(crd map[string]any) {
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if s, ok := vm["schema"].(map[string]any); ok {
			stripSchema(s["openAPIV3Schema"])
		}
	}
	if md, ok := crd["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	delete(crd, "status")
}
