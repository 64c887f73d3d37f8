package render

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// gateFS is the disk, except that kustomization files are read with this
// project's Gate and Pin entries taken out, and the top-level one with origin
// annotations switched on.
type gateFS struct {
	filesys.FileSystem
	bound    *boundFS // the same filesystem: the boundary the gate's own reads go through
	top      string   // absolute top-level directory
	display  string   // the directory as the user wrote it
	found    []Found
	seen     map[string]bool
	injected bool
	err      error // a bad Gate/Pin config: reported instead of kustomize's error
	// restrictNone is --load-restrictor LoadRestrictionsNone.
	restrictNone bool
	// noRemote is --no-remote: the edited top-level kustomization is
	// checked for remote entries too.
	noRemote bool
	edit     func(*yaml.RNode) error
	// images maps a kustomization path to the repositories its images:
	// entries produce (newName, else name), and where each entry is.
	images map[string][]imageEntry
	// editImages says where the entries the edit writes come from (an
	// Application's spec.source.kustomize.images), by repository.
	editImages map[string]manifest.ImageSource
	// execOff: KRM functions run, exec ones do not (--enable-alpha-plugins
	// without --enable-exec). kustomize then skips an exec function
	// without a word and exits 0; skipped records each one.
	execOff bool
	skipped []string
}

// SkippedExecError is a render in which kustomize would skip exec KRM
// functions: it exits 0 with a render the functions never saw, so no
// verdict on it is about what the kustomization means.
type SkippedExecError struct {
	Dir       string
	Functions []string // "transformers: fn.yaml (exec ./fn.sh) in overlays/prod/kustomization.yaml"
}

func (e *SkippedExecError) Error() string {
	return fmt.Sprintf("rendering %s: kustomize skips exec KRM functions without --enable-exec and exits 0, so the render is not what the kustomization means: %s (hint: --enable-exec runs them, as kustomize build --enable-alpha-plugins --enable-exec does)",
		e.Dir, strings.Join(e.Functions, "; "))
}

// ReadFile reads a file; kustomization files are rewritten.
func (g *gateFS) ReadFile(path string) ([]byte, error) {
	data, err := g.FileSystem.ReadFile(path)
	kustomization := slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(path))
	if err != nil {
		if kustomization && g.err == nil && !errors.Is(err, fs.ErrNotExist) {
			// kustomize reports a kustomization it cannot read as none
			// found ("unable to find one of 'kustomization.yaml', ...").
			// A name that is not there is kustomize probing the three it
			// knows (with --load-restrictor LoadRestrictionsNone it reads
			// each one).
			g.err = err
		}
		return data, err
	}
	if !kustomization {
		return keepLocalPolicies(data), nil
	}
	out, err := g.rewrite(path, data)
	if err != nil {
		if g.err == nil {
			g.err = err
		}
		return nil, err
	}
	return out, nil
}

func (g *gateFS) rewrite(path string, data []byte) ([]byte, error) {
	node, err := yaml.Parse(string(data))
	if err != nil {
		return data, nil // kustomize reports its own parse error
	}
	top := filepath.Dir(path) == g.top
	g.recordImages(path, node, nil)
	changed := false
	for _, field := range []string{"validators", "transformers"} {
		c, err := g.strip(node, path, field, top)
		if err != nil {
			return nil, err
		}
		changed = changed || c
	}
	if g.execOff {
		g.recordSkippedExec(node, path)
	}
	if top {
		if err := g.inject(node); err != nil {
			return nil, err
		}
		if g.edit != nil {
			if err := g.edit(node); err != nil {
				return nil, fmt.Errorf("editing %s: %w", g.rel(path), err)
			}
			g.recordEdited(path, node)
			if g.noRemote {
				// What the edit added was not in the file RemoteRefs read.
				refs, err := editedRemoteRefs(node, filepath.Dir(path), g.display, g.rel(path)+" (as the Application's kustomize overrides edit it)", func(p string) bool { return g.bound.check(p) == nil })
				if err != nil {
					return nil, err
				}
				if len(refs) > 0 {
					return nil, &RemoteError{Dir: g.display, Refs: refs}
				}
			}
		}
		changed = true
	}
	// Entries as kustomize will follow them (after the edit above).
	if err := fileRemoteEntries(node, g.rel(path)); err != nil {
		return nil, err
	}
	if err := g.checkChartHome(node, path); err != nil {
		return nil, err
	}
	if !changed {
		return data, nil
	}
	s, err := node.String()
	if err != nil {
		return nil, fmt.Errorf("rewriting %s: %w", g.rel(path), err)
	}
	return []byte(s), nil
}

// strip removes Gate/Pin entries from a validators/transformers list.
func (g *gateFS) strip(node *yaml.RNode, path, field string, top bool) (bool, error) {
	list := node.Field(field)
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return false, nil
	}
	var keep []*yaml.Node
	for _, entry := range list.Value.YNode().Content {
		obj, err := g.loadEntry(filepath.Dir(path), entry.Value)
		if err != nil {
			return false, fmt.Errorf("%s %s: %w", g.rel(path), field, err)
		}
		if obj == nil {
			keep = append(keep, entry)
			continue
		}
		key := fmt.Sprintf("%s|%s|%s", path, field, entry.Value)
		if !g.seen[key] {
			g.seen[key] = true
			g.found = append(g.found, Found{Object: obj, Field: field, Kustomization: g.rel(path), TopLevel: top})
		}
	}
	if len(keep) == len(list.Value.YNode().Content) {
		return false, nil
	}
	list.Value.YNode().Content = keep
	if len(keep) == 0 {
		return true, node.PipeE(yaml.Clear(field))
	}
	return true, nil
}

// recordSkippedExec records the exec KRM functions a kustomization lists
// (generators, transformers, validators; after Gate and Pin entries were
// taken out), which kustomize would skip. An entry is what kustomize makes
// of it: inline YAML when it parses as objects, whatever its length;
// otherwise a file, or a directory whose kustomization's resources are the
// function configs. With a container image a function is a container one,
// whatever its exec field says.
func (g *gateFS) recordSkippedExec(node *yaml.RNode, path string) {
	for _, field := range []string{"generators", "transformers", "validators"} {
		list := node.Field(field)
		if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, entry := range list.Value.YNode().Content {
			where := fmt.Sprintf("%s: %%s in %s", field, g.rel(path))
			if fns, ok := inlineEntry(entry.Value); ok {
				g.recordExec(fns, fmt.Sprintf(where, "inline"))
				continue
			}
			g.recordExecAt(filepath.Dir(path), entry.Value, entry.Value, where, map[string]bool{})
		}
	}
}

// recordExecAt records the exec functions of the file or kustomization
// directory entry names, relative to dir; shown is how to name it.
func (g *gateFS) recordExecAt(dir, entry, shown, where string, seen map[string]bool) {
	p := filepath.Join(dir, entry)
	if g.bound.check(p) != nil {
		return // kustomize meets it, and the boundary refuses it by name
	}
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		if seen[p] {
			return
		}
		seen[p] = true
		file, _ := kustomizationFile(p)
		if file == "" || g.bound.check(file) != nil {
			return
		}
		k, err := readKustomization(file, file)
		if err != nil {
			return // kustomize reports it when it builds the directory
		}
		res, err := k.Pipe(yaml.Lookup("resources"))
		if err != nil || res == nil || res.YNode().Kind != yaml.SequenceNode {
			return
		}
		for _, r := range res.YNode().Content {
			g.recordExecAt(p, r.Value, filepath.Join(shown, r.Value), where, seen)
		}
		return
	}
	data, err := g.readEntry(dir, entry)
	if err != nil || data == nil {
		return // not a local file: kustomize resolves (or refuses) it
	}
	fns, err := kio.FromBytes(data)
	if err != nil {
		return // kustomize reports its own parse error
	}
	g.recordExec(fns, fmt.Sprintf(where, shown))
}

func (g *gateFS) recordExec(fns []*yaml.RNode, where string) {
	for _, fn := range fns {
		spec, err := runtimeutil.GetFunctionSpec(fn)
		if err != nil || spec == nil || spec.Container.Image != "" || spec.Exec.Path == "" {
			continue
		}
		key := fmt.Sprintf("%s (exec %s)", where, spec.Exec.Path)
		if !slices.Contains(g.skipped, key) {
			g.skipped = append(g.skipped, key)
		}
	}
}

// inlineEntry parses a generators/transformers/validators entry as
// kustomize first does (inline configuration when it reads as objects,
// one line or many); ok is false when it is a path.
func inlineEntry(entry string) ([]*yaml.RNode, bool) {
	nodes, err := kio.FromBytes([]byte(entry))
	if err != nil || len(nodes) == 0 {
		return nil, false
	}
	for _, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			return nil, false
		}
	}
	return nodes, true
}

// loadEntry returns the Gate/Pin config an entry names (a file path or
// inline YAML), or nil when the entry is something else.
func (g *gateFS) loadEntry(dir, entry string) (*config.Object, error) {
	text := entry
	if !strings.Contains(entry, "\n") {
		data, err := g.readEntry(dir, entry)
		if err != nil || data == nil {
			return nil, err
		}
		text = string(data)
	}
	n, err := yaml.Parse(text)
	if err != nil || n.GetApiVersion() != config.APIVersion {
		return nil, nil
	}
	obj, err := config.Decode([]byte(text))
	if err != nil {
		return nil, &config.UsageError{Where: entry, Err: err}
	}
	gateDir := dir
	if !strings.Contains(entry, "\n") {
		gateDir = filepath.Dir(filepath.Join(dir, entry))
	}
	if err := g.boundPaths(obj, gateDir); err != nil {
		return nil, fmt.Errorf("%s: %w", entry, err)
	}
	return obj, nil
}

// boundPaths resolves the files an in-tree Gate names (spec.policies,
// spec.schema.crds) against the Gate's own directory and checks them
// through the boundary before anything reads them: each must lie in the
// root, reach no symlink out of it, and be a regular file (or a directory
// of them) within the cap. The paths become absolute, so the caller never
// resolves them against another config's directory.
func (g *gateFS) boundPaths(obj *config.Object, gateDir string) error {
	for _, list := range []struct {
		field   string
		entries []config.Entry
	}{{"spec.policies", obj.Spec.Policies}, {"spec.schema.crds", obj.Spec.Schema.CRDs}} {
		for i, e := range list.entries {
			if e.Object != nil {
				continue // inline: nothing is read
			}
			full, err := g.boundPath(e.Path, gateDir)
			if err != nil {
				return fmt.Errorf("%s[%d]: %w", list.field, i, err)
			}
			list.entries[i].Path = full
		}
	}
	if l := obj.Spec.Images.Lock; l != nil && l.Object == nil {
		full, err := g.boundPath(l.Path, gateDir)
		if err != nil {
			return fmt.Errorf("spec.images.lock: %w", err)
		}
		l.Path = full
	}
	return nil
}

func (g *gateFS) boundPath(p, gateDir string) (string, error) {
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(gateDir, filepath.FromSlash(p))
	}
	resolved, err := g.bound.root.Resolve(full)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", p, errors.Unwrap(err))
	}
	if fi.IsDir() {
		return full, g.bound.root.CheckTree(full)
	}
	return full, g.bound.root.Check(full)
}

// maxEntry bounds the read of a validators:/transformers: file.
const maxEntry = 1 << 20

// readEntry reads a validators:/transformers: entry as kustomize's load
// restrictor allows it, before kustomize does: the path, symlinks
// resolved, must stay under the kustomization's directory (unless
// --load-restrictor LoadRestrictionsNone), be a regular file (never a
// device or a FIFO, which would exhaust memory or block), and is read up to
// maxEntry. nil, nil means not a local file: kustomize resolves it.
func (g *gateFS) readEntry(dir, entry string) ([]byte, error) {
	path := filepath.Join(dir, entry)
	if !g.FileSystem.Exists(path) {
		return nil, nil
	}
	// Resolved as kustomize's restrictor does (the disk's CleanedAbs,
	// which opens nothing); the boundary judges the path before a read.
	d, f, err := g.bound.FileSystem.CleanedAbs(path)
	if err != nil || f == "" {
		return nil, nil // a directory or unresolvable: kustomize reports it
	}
	root, _, rerr := g.bound.FileSystem.CleanedAbs(dir)
	if !g.restrictNone && (rerr != nil || !d.HasPrefix(root)) {
		return nil, &config.UsageError{Where: entry, Err: fmt.Errorf("file is not in or below %s (kustomize's load restrictor refuses it)", dir)}
	}
	resolved := d.Join(f)
	if fi, err := os.Stat(resolved); err != nil || !fi.Mode().IsRegular() {
		return nil, &config.UsageError{Where: entry, Err: fmt.Errorf("%s is not a regular file", resolved)}
	}
	if err := g.bound.check(path); err != nil {
		return nil, g.bound.refused(err)
	}
	fh, err := os.Open(resolved)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", entry, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxEntry+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", entry, err)
	}
	if len(data) > maxEntry {
		return nil, &config.UsageError{Where: entry, Err: fmt.Errorf("larger than %d bytes", maxEntry)}
	}
	return data, nil
}

// inject switches on origin and transformer annotations.
func (g *gateFS) inject(node *yaml.RNode) error {
	var have []string
	if f := node.Field("buildMetadata"); f != nil {
		_ = f.Value.VisitElements(func(e *yaml.RNode) error {
			have = append(have, yaml.GetValue(e))
			return nil
		})
	}
	if slices.Contains(have, types.OriginAnnotations) && slices.Contains(have, types.TransformerAnnotations) {
		return nil
	}
	want := slices.Clone(have)
	for _, m := range []string{types.OriginAnnotations, types.TransformerAnnotations} {
		if !slices.Contains(want, m) {
			want = append(want, m)
		}
	}
	g.injected = true
	return node.PipeE(yaml.SetField("buildMetadata", yaml.NewListRNode(want...)))
}

// rel shows a path as the user would write it, relative to the working
// directory when it can be.
func (g *gateFS) rel(path string) string {
	if r, err := filepath.Rel(g.top, path); err == nil {
		return filepath.ToSlash(filepath.Join(g.display, r))
	}
	return path
}

// imageEntry is an images: entry of a kustomization: the repository it
// produces, and where it is written.
type imageEntry struct {
	repo string
	src  manifest.ImageSource
}

// recordImages notes which repositories a kustomization's images: entries
// produce, and the line of each, so a finding can name the overlay that
// set an image; edited gives the repositories an edit of the file wrote
// from elsewhere (an Application's overrides): their entries are there,
// not in the file.
func (g *gateFS) recordImages(path string, node *yaml.RNode, edited map[string]manifest.ImageSource) {
	list := node.Field("images")
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return
	}
	var entries []imageEntry
	for _, e := range list.Value.YNode().Content {
		repo := yamlpath.String(e, "newName")
		if repo == "" {
			repo = yamlpath.String(e, "name")
		}
		src, ok := edited[repo]
		if !ok {
			src = manifest.ImageSource{File: g.rel(path), Line: e.Line}
		}
		entries = append(entries, imageEntry{repo, src})
	}
	if g.images == nil {
		g.images = map[string][]imageEntry{}
	}
	g.images[g.rel(path)] = entries
}

// recordEdited records the top-level kustomization's images: entries
// again after the edit: those the edit wrote are where editImages says,
// the others where the file had them (the edit rewrites the file, so its
// nodes' lines are not the file's).
func (g *gateFS) recordEdited(path string, node *yaml.RNode) {
	before := map[string]manifest.ImageSource{}
	for _, e := range g.images[g.rel(path)] {
		before[e.repo] = e.src
	}
	edited := maps.Clone(g.editImages)
	if edited == nil {
		edited = map[string]manifest.ImageSource{}
	}
	list := node.Field("images")
	if list == nil || list.Value.YNode().Kind != yaml.SequenceNode {
		return
	}
	for _, e := range list.Value.YNode().Content {
		repo := yamlpath.String(e, "newName")
		if repo == "" {
			repo = yamlpath.String(e, "name")
		}
		if _, ok := edited[repo]; !ok {
			src, ok := before[repo]
			if !ok {
				src = manifest.ImageSource{File: g.rel(path)}
			}
			edited[repo] = src
		}
	}
	g.recordImages(path, node, edited)
}

// checkChartHome refuses a kustomization whose helmCharts: would render a
// chart from a home outside the boundary (helmGlobals.chartHome, or the
// chartHome of a HelmChartInflationGenerator it lists under generators:):
// the chart is read by the helm command kustomize runs, not through the
// boundary, and its templates' .Files.Get would read what lies beside it.
// kustomize resolves a relative chart home against the kustomization's
// directory; its default (charts) lies there. Outside reads allowed
// (--load-restrictor LoadRestrictionsNone), kustomize's own rule holds.
func (g *gateFS) checkChartHome(node *yaml.RNode, path string) error {
	dir := filepath.Dir(path)
	check := func(where, home string) error {
		if home == "" {
			return nil
		}
		p := home
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(p))
		}
		if err := g.bound.check(p); err != nil {
			return fmt.Errorf("%s: %s %s: %w", g.rel(path), where, home, g.bound.explain(err))
		}
		return nil
	}
	if charts := node.Field("helmCharts"); charts != nil && len(charts.Value.Content()) > 0 {
		if err := check("helmGlobals.chartHome", yamlpath.String(node.YNode(), "helmGlobals.chartHome")); err != nil {
			return err
		}
	}
	gens := node.Field("generators")
	if gens == nil || gens.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	for _, e := range gens.Value.YNode().Content {
		fns, ok := inlineEntry(e.Value)
		if !ok {
			data, err := g.readEntry(dir, e.Value)
			if err != nil || data == nil {
				continue // kustomize resolves (or refuses) it
			}
			if fns, err = kio.FromBytes(data); err != nil {
				continue // kustomize reports its own parse error
			}
		}
		for _, fn := range fns {
			if fn.GetKind() != "HelmChartInflationGenerator" {
				continue
			}
			if err := check("generators: "+e.Value+": chartHome", yamlpath.String(fn.YNode(), "chartHome")); err != nil {
				return err
			}
		}
	}
	return nil
}
