package appset

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// gitSpec is a git generator.
type gitSpec struct {
	RepoURL         string            `json:"repoURL"`
	Revision        string            `json:"revision"`
	PathParamPrefix string            `json:"pathParamPrefix"`
	Values          map[string]string `json:"values"`
	Directories     []pathPattern     `json:"directories"`
	Files           []pathPattern     `json:"files"`
}

type pathPattern struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude"`
}

// git lists the checkout's directories or files the generator asks for.
func (e *expander) git(body map[string]any, field string) ([]params, error) {
	var g gitSpec
	if err := remarshal(body, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if e.opts.IsCheckout != nil && !e.opts.IsCheckout(g.RepoURL) {
		return nil, &NoVerdictError{Generator: field, Reason: fmt.Sprintf("repoURL %s is not the repository checked out at %s", g.RepoURL, e.opts.Root)}
	}
	if e.opts.Revision != nil {
		root, why := e.opts.Revision(g.Revision)
		if why != "" {
			return nil, &NoVerdictError{Generator: field, Reason: why}
		}
		// The generator lists and reads the files of its revision.
		checkout := e.opts.Root
		e.opts.Root = root
		defer func() { e.opts.Root = checkout }()
	}
	switch {
	case len(g.Directories) > 0:
		return e.gitDirectories(g, field)
	case len(g.Files) > 0:
		return e.gitFiles(g, field)
	}
	return nil, fmt.Errorf("%s: neither directories nor files is set", field)
}

// gitDirectories matches every directory of the checkout (hidden ones
// skipped, as the repo-server walks) against the path globs with
// path.Match; an exclude entry wins over any include.
func (e *expander) gitDirectories(g gitSpec, field string) ([]params, error) {
	dirs, err := walkDirectories(e.opts.Root)
	if err != nil {
		return nil, err
	}
	var out []params
	for _, d := range dirs {
		include, exclude := false, false
		for _, p := range g.Directories {
			if ok, _ := path.Match(p.Path, d); ok {
				include = include || !p.Exclude
				exclude = exclude || p.Exclude
			}
		}
		if !include || exclude {
			continue
		}
		p := e.pathParams(d, "", g.PathParamPrefix)
		if err := e.appendValues(g.Values, p); err != nil {
			return nil, fmt.Errorf("%s.values: %w", field, err)
		}
		out = append(out, params{values: p, origin: field + ".directories: " + d})
	}
	return out, nil
}

// walkDirectories lists the checkout's directories relative to root,
// skipping hidden ones (.git among them), in walk order.
func walkDirectories(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the directories of %s: %w", root, err)
	}
	return out, nil
}

// gitFiles reads the files the include patterns match, minus those an
// exclude pattern matches, sorted by path; each file holds one object or a
// list of objects, each a param set.
func (e *expander) gitFiles(g gitSpec, field string) ([]params, error) {
	files, err := walkFiles(e.opts.Root)
	if err != nil {
		return nil, err
	}
	matched := map[string]bool{}
	for _, excluded := range []bool{false, true} {
		for _, p := range g.Files {
			if p.Exclude != excluded {
				continue
			}
			re, err := gitGlob(p.Path)
			if err != nil {
				return nil, fmt.Errorf("%s.files: %w", field, err)
			}
			for _, f := range files {
				if re.MatchString(f) {
					matched[f] = !excluded
				}
			}
		}
	}
	var out []params
	for _, f := range sortedKeys(matched) {
		if !matched[f] {
			continue
		}
		ps, err := e.fileParams(f, g, field)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// walkFiles lists the checkout's files relative to root, outside .git.
func walkFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s: %w", root, err)
	}
	sort.Strings(out)
	return out, nil
}

// gitGlob compiles a files pattern as `git ls-files -- PATTERN` matches it
// (Argo CD's default, without the new globbing option): a pathspec glob
// where * and ? also match '/'.
func gitGlob(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	class := false
	for _, r := range pattern {
		switch {
		case class:
			if r == ']' {
				class = false
			}
			if r == '!' && strings.HasSuffix(b.String(), "[") {
				b.WriteByte('^')
			} else if r == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteRune(r)
			}
		case r == '[':
			class = true
			b.WriteByte('[')
		case r == '*':
			b.WriteString(".*")
		case r == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return re, nil
}

// fileParams parses one generator file: an object, or a list of objects.
func (e *expander) fileParams(file string, g gitSpec, field string) ([]params, error) {
	// Through the checkout's boundary: a symlink out of it, a FIFO or a
	// file over the cap is refused by name, its content never read.
	root, err := fsbound.New(e.opts.Root, e.opts.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s.files: %w", field, err)
	}
	data, err := root.ReadFile(filepath.Join(e.opts.Root, filepath.FromSlash(file)))
	if err != nil {
		return nil, fmt.Errorf("%s.files: %w", field, err)
	}
	objs, err := parseObjects(data)
	if err != nil {
		return nil, fmt.Errorf("%s.files: parsing %s: %w", field, file, err)
	}
	var out []params
	for i, obj := range objs {
		var p map[string]any
		if e.spec.GoTemplate {
			p = deepCopyMap(obj)
		} else {
			p = map[string]any{}
			for k, v := range flatten(obj) {
				p[k] = v
			}
		}
		for k, v := range e.pathParams(path.Dir(file), path.Base(file), g.PathParamPrefix) {
			p[k] = v
		}
		if err := e.appendValues(g.Values, p); err != nil {
			return nil, fmt.Errorf("%s.values: %w", field, err)
		}
		origin := field + ".files: " + file
		if len(objs) > 1 {
			origin += "[" + strconv.Itoa(i) + "]"
		}
		out = append(out, params{values: p, origin: origin})
	}
	return out, nil
}

// parseObjects reads a generator file as Argo CD does: one object, else a
// list of objects.
func parseObjects(data []byte) ([]map[string]any, error) {
	one := map[string]any{}
	if err := sigsyaml.Unmarshal(data, &one); err == nil {
		return []map[string]any{one}, nil
	}
	var many []map[string]any
	if err := sigsyaml.Unmarshal(data, &many); err != nil {
		return nil, err
	}
	return many, nil
}

// pathParams are the path params of a directory (filename "" for the
// directories generator): flat path, path.basename, path[N] … without
// goTemplate, a nested path map with goTemplate.
func (e *expander) pathParams(dir, filename, prefix string) map[string]any {
	p := map[string]any{}
	if e.spec.GoTemplate {
		pp := map[string]any{
			"path": dir, "basename": path.Base(dir), "basenameNormalized": SanitizeName(path.Base(dir)),
			"segments": toAny(strings.Split(dir, "/")),
		}
		if filename != "" {
			pp["filename"] = filename
			pp["filenameNormalized"] = SanitizeName(filename)
		}
		if prefix != "" {
			p[prefix] = map[string]any{"path": pp}
		} else {
			p["path"] = pp
		}
		return p
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	p[name] = dir
	p[name+".basename"] = path.Base(dir)
	p[name+".basenameNormalized"] = SanitizeName(path.Base(dir))
	if filename != "" {
		p[name+".filename"] = filename
		p[name+".filenameNormalized"] = SanitizeName(filename)
	}
	for i, seg := range strings.Split(dir, "/") {
		if seg != "" {
			p[name+"["+strconv.Itoa(i)+"]"] = seg
		}
	}
	return p
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// appendValues renders a generator's values: with the param set and adds
// them as values.KEY (flat) or a values map (goTemplate).
func (e *expander) appendValues(values map[string]string, p map[string]any) error {
	if len(values) == 0 {
		return nil
	}
	rendered := map[string]any{}
	for _, k := range sortedKeys(values) {
		v, err := e.replace(values[k], p, e.spec.GoTemplateOptions)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		rendered[k] = v
	}
	if e.spec.GoTemplate {
		p["values"] = rendered
		return nil
	}
	for k, v := range rendered {
		p["values."+k] = v
	}
	return nil
}

var invalidDNSChars = regexp.MustCompile("[^-a-z0-9.]")

// SanitizeName makes a string a DNS name as Argo CD's basenameNormalized
// and normalize do: lower case, other characters to '-', at most 253.
func SanitizeName(name string) string {
	name = invalidDNSChars.ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}
