// Package flux renders Flux Kustomizations (kustomize.toolkit.fluxcd.io)
// from a local checkout as kustomize-controller does: the kustomization
// Flux generates over spec.path (targetNamespace, namePrefix/nameSuffix,
// images, patches, components, a generated kustomization.yaml where the
// directory has none), a kustomize build with load restrictions off and no
// plugins, then postBuild variable substitution.
//
// The generation, the build and the substitution are Flux's own code
// (github.com/fluxcd/pkg/kustomize, v1.41.0: the newest release that builds
// on Go 1.26 with every k8s.io module at v0.37.2). What differs from the
// controller is where postBuild.substituteFrom reads: the render the
// Kustomization came from, not the cluster. A ConfigMap or Secret that is
// not in the render is a *NoVerdictError: its values live in the cluster.
package flux

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	fluxfs "github.com/fluxcd/pkg/kustomize/filesys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// API groups of the Flux objects the gate reads.
const (
	KustomizeGroup = "kustomize.toolkit.fluxcd.io"
	SourceGroup    = "source.toolkit.fluxcd.io"
	HelmGroup      = "helm.toolkit.fluxcd.io"
)

// IsKustomization reports whether r is a Flux Kustomization (not a
// kustomize.config.k8s.io one).
func IsKustomization(r *yaml.RNode) bool { return is(r, KustomizeGroup, "Kustomization") }

// IsGitRepository reports whether r is a Flux GitRepository.
func IsGitRepository(r *yaml.RNode) bool { return is(r, SourceGroup, "GitRepository") }

// IsHelmRelease reports whether r is a Flux HelmRelease.
func IsHelmRelease(r *yaml.RNode) bool { return is(r, HelmGroup, "HelmRelease") }

func is(r *yaml.RNode, group, kind string) bool {
	return strings.HasPrefix(r.GetApiVersion(), group+"/") && r.GetKind() == kind
}

// NoVerdictError says that a Flux object cannot be rendered here: its
// source or its variables live outside the checkout.
type NoVerdictError struct {
	// Object names it: "Kustomization flux-system/apps".
	Object string
	Reason string
}

func (e *NoVerdictError) Error() string { return e.Object + ": " + e.Reason }

// Name names a Flux object for messages: "Kustomization flux-system/apps".
func Name(r *yaml.RNode) string {
	return r.GetKind() + " " + r.GetNamespace() + "/" + r.GetName()
}

// SourceRef is the source a Kustomization or HelmRelease chart reads.
type SourceRef struct {
	Kind, Name, Namespace string
}

// KustomizationSource returns a Kustomization's spec.sourceRef; the
// namespace defaults to the Kustomization's.
func KustomizationSource(ks *yaml.RNode) SourceRef {
	return sourceRef(ks, "spec", "sourceRef")
}

func sourceRef(obj *yaml.RNode, path ...string) SourceRef {
	ref := SourceRef{Namespace: obj.GetNamespace()}
	n, err := obj.Pipe(yaml.Lookup(path...))
	if err != nil || n == nil {
		return ref
	}
	ref.Kind, ref.Name = str(n, "kind"), str(n, "name")
	if ns := str(n, "namespace"); ns != "" {
		ref.Namespace = ns
	}
	return ref
}

// FindSource returns the object of the render a source reference names, or
// nil.
func FindSource(ref SourceRef, resources []*yaml.RNode) *yaml.RNode {
	for _, r := range resources {
		if strings.HasPrefix(r.GetApiVersion(), SourceGroup+"/") && r.GetKind() == ref.Kind &&
			r.GetName() == ref.Name && r.GetNamespace() == ref.Namespace {
			return r
		}
	}
	return nil
}

func str(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

// Render renders a Kustomization's spec.path from the checkout at root as
// kustomize-controller does; resources is the render the Kustomization
// came from, where postBuild.substituteFrom finds its ConfigMaps and
// Secrets. Files are read up to fsbound.DefaultMaxFileBytes each.
func Render(ks *yaml.RNode, root string, resources []*yaml.RNode) ([]*yaml.RNode, error) {
	objs, _, err := render(ks, root, resources, false, 0)
	return objs, err
}

// Traced is Render with kustomize's origin and transformer annotations
// switched on where the kustomization does not ask for them itself
// (injected), as the gate renders -k: a finding then names the file and
// line an object and a value came from. Their paths are relative to the
// Kustomization's spec.path; the caller removes them before printing.
// Each file is read up to maxFileBytes (--max-input-bytes; 0:
// fsbound.DefaultMaxFileBytes).
func Traced(ks *yaml.RNode, root string, resources []*yaml.RNode, maxFileBytes int64) (objs []*yaml.RNode, injected bool, err error) {
	return render(ks, root, resources, true, maxFileBytes)
}

func render(ks *yaml.RNode, root string, resources []*yaml.RNode, trace bool, maxFileBytes int64) (_ []*yaml.RNode, injected bool, _ error) {
	name := Name(ks)
	obj, err := toUnstructured(ks)
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, err)
	}
	dir, err := sourceDir(root, str(ks, "spec", "path"))
	if err != nil {
		return nil, false, fmt.Errorf("%s: spec.path: %w", name, err)
	}
	vars, substitute, err := variables(ks, resources)
	if err != nil {
		return nil, false, err
	}
	disk, err := fluxfs.MakeFsOnDiskSecure(root)
	if err != nil {
		return nil, false, fmt.Errorf("%s: opening %s: %w", name, root, err)
	}
	bound, err := fsbound.New(root, maxFileBytes)
	if err != nil {
		return nil, false, fmt.Errorf("%s: opening %s: %w", name, root, err)
	}
	fs := bounded{FileSystem: disk, root: bound}
	// The generator reads the files it lists with kustomize's reader on a
	// filesystem of its own: they are checked first.
	if err := checkScanned(fs, bound, dir); err != nil {
		return nil, false, fmt.Errorf("%s: generating the kustomization of %s: %w", name, dir, err)
	}
	manifest, kfile, _, err := fluxkustomize.NewGenerator(root, obj).GenerateManifest(dir)
	if err != nil {
		return nil, false, fmt.Errorf("%s: generating the kustomization of %s: %w", name, dir, err)
	}
	if trace {
		if manifest, injected, err = withBuildMetadata(manifest); err != nil {
			return nil, false, fmt.Errorf("%s: the kustomization of %s: %w", name, dir, err)
		}
	}
	// The controller writes the generated kustomization.yaml into its
	// copy of the source; the gate lays it over the checkout in memory.
	overlay := fluxfs.MakeFsInMemory(fs)
	if err := overlay.WriteFile(kfile, manifest); err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	m, err := fluxkustomize.Build(overlay, dir)
	if err != nil {
		return nil, false, fmt.Errorf("%s: building %s: %w", name, dir, err)
	}
	if substitute {
		always := str(ks, "spec", "postBuild", "substituteStrategy") == "Always"
		if err := substituteAll(obj, vars, always, m.Resources()); err != nil {
			return nil, false, fmt.Errorf("%s: postBuild: %w", name, err)
		}
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	objs, err := kio.FromBytes(data)
	return objs, injected, err
}

// withBuildMetadata adds kustomize's originAnnotations and
// transformerAnnotations to a kustomization's buildMetadata; injected is
// false when it asked for both already.
func withBuildMetadata(kust []byte) (_ []byte, injected bool, _ error) {
	node, err := yaml.Parse(string(kust))
	if err != nil {
		return nil, false, err
	}
	var have []string
	if f := node.Field("buildMetadata"); f != nil {
		_ = f.Value.VisitElements(func(e *yaml.RNode) error {
			have = append(have, yaml.GetValue(e))
			return nil
		})
	}
	want := slices.Clone(have)
	for _, m := range []string{"originAnnotations", "transformerAnnotations"} {
		if !slices.Contains(want, m) {
			want = append(want, m)
		}
	}
	if len(want) == len(have) {
		return kust, false, nil
	}
	if err := node.PipeE(yaml.SetField("buildMetadata", yaml.NewListRNode(want...))); err != nil {
		return nil, false, err
	}
	s, err := node.String()
	return []byte(s), true, err
}

// bounded is the checkout as the Flux build reads it: through the gate's
// filesystem boundary (internal/fsbound), as -k's kustomize reads through
// it (internal/render's boundFS). Every file read must be a regular file
// within the per-file cap (--max-input-bytes): a FIFO waits for nothing,
// /dev/zero or a multi-GB file is refused by name before it is read. A
// symlink whose target leaves the checkout is refused by name (Flux's
// secure filesystem under it refused it too, in its own words), and so is
// a directory kustomize confirms through one. A YAML file with an alias
// kustomize's reader cannot expand (an alias inside its own anchor, or a
// "billion laughs") is refused by name, as the gate's -k filesystem
// refuses it (stream.CheckAliases): kyaml would recurse until the stack
// overflows, or expand without bound.
type bounded struct {
	filesys.FileSystem
	root *fsbound.Root
}

// ReadFile reads path through the boundary, refusing aliases kustomize
// cannot expand.
func (b bounded) ReadFile(path string) ([]byte, error) {
	data, err := b.root.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := stream.CheckAliases(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// Open opens path once the boundary has checked it (kustomize reads with
// ReadFile; this keeps any other reader bounded too).
func (b bounded) Open(path string) (filesys.File, error) {
	if err := b.root.Check(path); err != nil {
		return nil, err
	}
	return b.FileSystem.Open(path)
}

// CleanedAbs is how kustomize confirms a directory (a base, a component)
// and finds a file's directory: it resolves the path's symlinks, so the
// path is checked first. A path that does not exist passes, for kustomize
// to report.
func (b bounded) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if _, err := b.root.Resolve(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	return b.FileSystem.CleanedAbs(path)
}

// checkScanned reads through fs what Flux's generator reads on a
// filesystem of its own (it takes no other): the kustomization file of dir
// when there is one (read with go-yaml v2), else every .yaml and .yml file
// below dir (kustomize_generator.go scanManifests, with kyaml), but not
// below a directory that has a kustomization (the build reads that one,
// through fs). Every symlink the walk meets must stay in root, as the
// generator's walk requires. The checkout is taken not to change between
// this check and the generator's read.
func checkScanned(fs filesys.FileSystem, root *fsbound.Root, dir string) error {
	if _, err := root.Resolve(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if found, err := checkKustomization(fs, root, dir); found || err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		if d.IsDir() {
			found, err := checkKustomization(fs, root, path)
			if found && err == nil {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			if err := root.Link(path); err != nil {
				return err
			}
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		_, err = fs.ReadFile(path)
		return err
	})
}

// checkKustomization reads through fs the kustomization files of dir the
// generator would read (any entry of a recognized name that is not a
// directory); found is whether there is one.
func checkKustomization(fs filesys.FileSystem, root *fsbound.Root, dir string) (found bool, _ error) {
	for _, k := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, k)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if err := root.Link(p); err != nil {
				return true, err
			}
			if fi, err = os.Stat(p); err != nil {
				continue
			}
		}
		if fi.IsDir() {
			continue
		}
		if _, err := fs.ReadFile(p); err != nil {
			return true, err
		}
		found = true
	}
	return found, nil
}

// sourceDir is spec.path inside the checkout; a path that leaves it is an
// error (the controller's secure join refuses it too).
func sourceDir(root, path string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(path, "/")))
	if !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%q leaves the repository", path)
	}
	return filepath.Join(abs, rel), nil
}

func toUnstructured(n *yaml.RNode) (unstructured.Unstructured, error) {
	data, err := n.MarshalJSON()
	if err != nil {
		return unstructured.Unstructured{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return unstructured.Unstructured{}, err
	}
	return unstructured.Unstructured{Object: m}, nil
}

// variables collects postBuild's variables: substituteFrom's ConfigMaps
// and Secrets from the render, in order, then postBuild.substitute over
// them. substitute is false when there is no postBuild: the controller
// then substitutes nothing.
func variables(ks *yaml.RNode, resources []*yaml.RNode) (map[string]string, bool, error) {
	post, err := ks.Pipe(yaml.Lookup("spec", "postBuild"))
	if err != nil || post == nil {
		return nil, false, nil
	}
	vars := map[string]string{}
	refs, _ := post.Pipe(yaml.Lookup("substituteFrom"))
	if refs != nil {
		elems, _ := refs.Elements()
		for i, ref := range elems {
			kind, name := str(ref, "kind"), str(ref, "name")
			src := findObject(resources, kind, ks.GetNamespace(), name)
			if src == nil {
				return nil, false, &NoVerdictError{Object: Name(ks), Reason: fmt.Sprintf(
					"spec.postBuild.substituteFrom[%d]: %s %s/%s is not in the render: its variables come from the cluster", i, kind, ks.GetNamespace(), name)}
			}
			if err := readData(src, vars); err != nil {
				return nil, false, fmt.Errorf("%s: spec.postBuild.substituteFrom[%d]: %w", Name(ks), i, err)
			}
		}
	}
	if sub, _ := post.Pipe(yaml.Lookup("substitute")); sub != nil {
		_ = sub.VisitFields(func(f *yaml.MapNode) error {
			vars[yaml.GetValue(f.Key)] = strings.ReplaceAll(yaml.GetValue(f.Value), "\n", "")
			return nil
		})
	}
	return vars, true, nil
}

func findObject(resources []*yaml.RNode, kind, namespace, name string) *yaml.RNode {
	for _, r := range resources {
		if r.GetApiVersion() == "v1" && r.GetKind() == kind && r.GetName() == name && r.GetNamespace() == namespace {
			return r
		}
	}
	return nil
}

// readData adds a ConfigMap's data, or a Secret's data (decoded) and
// stringData, to vars, newlines removed as the controller does.
func readData(obj *yaml.RNode, vars map[string]string) error {
	for _, field := range []string{"data", "stringData"} {
		m, _ := obj.Pipe(yaml.Lookup(field))
		if m == nil {
			continue
		}
		err := m.VisitFields(func(f *yaml.MapNode) error {
			v := yaml.GetValue(f.Value)
			if obj.GetKind() == "Secret" && field == "data" {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return fmt.Errorf("%s %s data.%s: %w", obj.GetKind(), obj.GetName(), yaml.GetValue(f.Key), err)
				}
				v = string(b)
			}
			vars[yaml.GetValue(f.Key)] = strings.ReplaceAll(v, "\n", "")
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// substituteAll runs Flux's substitution on every resource with the
// collected variables as the Kustomization's inline postBuild.substitute
// (dry run: Flux then reads nothing from a cluster). always is
// postBuild.substituteStrategy: Always — substitute even without variables,
// so ${VAR:=default} defaults apply.
func substituteAll(obj unstructured.Unstructured, vars map[string]string, always bool, resources []*resource.Resource) error {
	withVars := obj.DeepCopy()
	flat := make(map[string]any, len(vars))
	for k, v := range vars {
		flat[k] = v
	}
	if err := unstructured.SetNestedMap(withVars.Object, flat, "spec", "postBuild", "substitute"); err != nil {
		return err
	}
	unstructured.RemoveNestedField(withVars.Object, "spec", "postBuild", "substituteFrom")
	for _, res := range resources {
		if _, err := fluxkustomize.SubstituteVariables(context.Background(), nil, *withVars, res,
			fluxkustomize.SubstituteWithDryRun(true), fluxkustomize.SubstituteWithAlways(always)); err != nil {
			return fmt.Errorf("%s %s: %w", res.GetKind(), res.GetName(), err)
		}
	}
	return nil
}
