package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/valyala/fasttemplate"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/tmplbound"
)

// baseTemplate holds the functions Argo CD gives goTemplate templates:
// sprig's, without env, expandenv and getHostByName, plus normalize,
// slugify, toYaml, fromYaml and fromYamlArray.
var baseTemplate = func() *template.Template {
	funcs := sprig.GenericFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(funcs, name)
	}
	funcs["normalize"] = SanitizeName
	funcs["slugify"] = slugify
	funcs["toYaml"] = func(v any) (string, error) {
		data, err := sigsyaml.Marshal(v)
		return strings.TrimSuffix(string(data), "\n"), err
	}
	funcs["fromYaml"] = func(s string) (map[string]any, error) {
		m := map[string]any{}
		return m, sigsyaml.Unmarshal([]byte(s), &m)
	}
	funcs["fromYamlArray"] = func(s string) ([]any, error) {
		a := []any{}
		return a, sigsyaml.Unmarshal([]byte(s), &a)
	}
	// repeat, until and untilStep refuse a result over the caps before
	// they allocate it (a 461-byte ApplicationSet asked for 10 GB).
	for name, f := range tmplbound.Funcs(DefaultMaxOutputBytes) {
		funcs[name] = f
	}
	return template.New("base").Funcs(funcs)
}()

var isTemplated = regexp.MustCompile("{{.*}}")

// replace renders one string with a param set: as a Go template with
// goTemplate, else fasttemplate's {{ key }} tags, a tag without a string
// param of that name left as written.
func (e *expander) replace(s string, p map[string]any, options []string) (string, error) {
	if e.spec.GoTemplate {
		// Text without an action renders as itself: no parse needed.
		if !strings.Contains(s, "{{") {
			return s, nil
		}
		t, err := e.parsed(s, options)
		if err != nil {
			return "", err
		}
		b := &tmplbound.Writer{Budget: e.maxOutput() - e.output}
		if err := t.Execute(b, p); err != nil {
			if errors.Is(err, tmplbound.ErrOverBudget) {
				return "", &CapError{ApplicationSet: e.name, What: "the text its templates render", Max: e.maxOutput()}
			}
			return "", fmt.Errorf("executing template %q: %w", s, err)
		}
		e.output += int64(b.Len())
		return b.String(), nil
	}
	if !isTemplated.MatchString(s) {
		return s, nil
	}
	t, err := fasttemplate.NewTemplate(s, "{{", "}}")
	if err != nil {
		return "", fmt.Errorf("template %q: %w", s, err)
	}
	out := t.ExecuteFuncString(func(w io.Writer, tag string) (int, error) {
		v, ok := p[strings.TrimSpace(tag)].(string)
		if strings.TrimSpace(tag) == "" || !ok {
			return fmt.Fprintf(w, "{{%s}}", tag)
		}
		return io.WriteString(w, v)
	})
	if e.output += int64(len(out)); e.output > e.maxOutput() {
		return "", &CapError{ApplicationSet: e.name, What: "the text its templates render", Max: e.maxOutput()}
	}
	return out, nil
}

// parsed returns a string parsed as a Go template with the options, parsed
// once per expansion: cloning the sprig function map is most of the cost.
func (e *expander) parsed(s string, options []string) (*template.Template, error) {
	key := strings.Join(options, ",") + "\x00" + s
	if t, ok := e.templates[key]; ok {
		return t, nil
	}
	t, err := baseTemplate.Clone()
	if err != nil {
		return nil, err
	}
	for _, o := range options {
		// text/template panics on an option it does not know; Argo CD
		// passes goTemplateOptions to it as they are.
		switch o {
		case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
		default:
			return nil, fmt.Errorf("goTemplateOptions: unrecognized option %q (text/template knows missingkey=default, invalid, zero and error)", o)
		}
		t = t.Option(o)
	}
	if t, err = t.Parse(s); err != nil {
		return nil, fmt.Errorf("parsing template %q: %w", s, err)
	}
	if e.templates == nil {
		e.templates = map[string]*template.Template{}
	}
	e.templates[key] = t
	return t, nil
}

// renderTree renders every string, and every map key, of a decoded JSON
// value; other scalars are kept.
func (e *expander) renderTree(v any, p map[string]any, options []string) (any, error) {
	switch t := v.(type) {
	case string:
		return e.replace(t, p, options)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			r, err := e.renderTree(x, p, options)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if x == nil {
				continue
			}
			r, err := e.renderTree(x, p, options)
			if err != nil {
				return nil, err
			}
			key, err := e.replace(k, p, options)
			if err != nil {
				return nil, err
			}
			out[key] = r
		}
		return out, nil
	}
	return v, nil
}

// interpolate renders a matrix's second generator with a param set of the
// first. The values: of a git generator keep what they cannot resolve yet
// (its own params fill them later), as Argo CD pre-resolves them with
// missingkey=error and keeps the original on a missing key.
func (e *expander) interpolate(g map[string]any, p map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for kind, body := range g {
		m, ok := body.(map[string]any)
		if !ok {
			r, err := e.renderTree(body, p, e.spec.GoTemplateOptions)
			if err != nil {
				return nil, err
			}
			out[kind] = r
			continue
		}
		values, hasValues := m["values"].(map[string]any)
		rest := without(m, "values")
		r, err := e.renderTree(rest, p, e.spec.GoTemplateOptions)
		if err != nil {
			return nil, err
		}
		rm := r.(map[string]any)
		if hasValues {
			rm["values"] = e.preResolve(values, p)
		}
		out[kind] = rm
	}
	return out, nil
}

func (e *expander) preResolve(values map[string]any, p map[string]any) map[string]any {
	options := []string{"missingkey=error"}
	for _, o := range e.spec.GoTemplateOptions {
		if !strings.HasPrefix(o, "missingkey=") {
			options = append(options, o)
		}
	}
	out := map[string]any{}
	for k, v := range values {
		s, ok := v.(string)
		if !ok {
			out[k] = v
			continue
		}
		r, err := e.replace(s, p, options)
		if err != nil {
			r = s
		}
		out[k] = r
	}
	return out
}

// without returns a shallow copy of m without the key.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// renderAll renders a generator's template with each of its param sets.
func (e *expander) renderAll(g generated) ([]Generated, error) {
	var out []Generated
	for _, p := range g.params {
		app, err := e.render(g.template, p.values)
		if err != nil {
			return nil, fmt.Errorf("ApplicationSet %s: rendering the template for %s: %w", e.name, p.origin, err)
		}
		out = append(out, Generated{App: app, Element: p.origin})
	}
	return out, nil
}

// render makes one Application: the template rendered with the params,
// templatePatch rendered and merged over it (it may not change the
// project), in the ApplicationSet's namespace, with the resources
// finalizer unless preserveResourcesOnDeletion.
func (e *expander) render(tmpl map[string]any, p map[string]any) (*yaml.RNode, error) {
	app := deepCopyMap(tmpl)
	if len(p) > 0 {
		r, err := e.renderTree(app, p, e.spec.GoTemplateOptions)
		if err != nil {
			return nil, err
		}
		app = r.(map[string]any)
	}
	if e.spec.TemplatePatch != nil {
		patched, err := e.applyPatch(app, p)
		if err != nil {
			return nil, err
		}
		app = patched
	}
	meta, _ := app["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		app["metadata"] = meta
	}
	ns := strings.SplitN(e.name, "/", 2)[0]
	if ns != "" {
		meta["namespace"] = ns
	} else {
		delete(meta, "namespace")
	}
	if f, _ := meta["finalizers"].([]any); len(f) == 0 && !e.spec.SyncPolicy.PreserveResourcesOnDeletion {
		meta["finalizers"] = []any{"resources-finalizer.argocd.argoproj.io"}
	}
	if name, _ := meta["name"].(string); name == "" {
		return nil, fmt.Errorf("the generated Application has no metadata.name")
	}
	ordered := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}
	for k, v := range app {
		ordered[k] = v
	}
	data, err := json.Marshal(ordered)
	if err != nil {
		return nil, err
	}
	n, err := yaml.Parse(string(data))
	if err != nil {
		return nil, err
	}
	// Its lines are those of one line of JSON, not of the ApplicationSet's
	// file, whatever annotations its template gives it
	// (manifest.StreamDoc).
	n.YNode().Line, n.YNode().Column = 0, 0
	return n, nil
}

// applyPatch renders templatePatch and merges it over the Application.
// Argo CD applies it as a strategic merge patch against its Application
// type, which declares no list merge keys: lists are replaced and maps
// merged, a JSON merge patch.
func (e *expander) applyPatch(app map[string]any, p map[string]any) (map[string]any, error) {
	text, err := e.replace(*e.spec.TemplatePatch, p, e.spec.GoTemplateOptions)
	if err != nil {
		return nil, fmt.Errorf("templatePatch: %w", err)
	}
	var patch map[string]any
	if err := sigsyaml.Unmarshal([]byte(text), &patch); err != nil {
		return nil, fmt.Errorf("templatePatch does not parse after rendering: %w", err)
	}
	spec, _ := app["spec"].(map[string]any)
	project := spec["project"]
	out := mergePatch(app, patch).(map[string]any)
	if s, ok := out["spec"].(map[string]any); ok {
		if project == nil {
			delete(s, "project")
		} else {
			s["project"] = project
		}
	}
	return out, nil
}

// mergePatch applies an RFC 7386 merge patch.
func mergePatch(dst, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return deepCopy(patch)
	}
	dm, ok := dst.(map[string]any)
	if !ok {
		dm = map[string]any{}
	} else {
		dm = deepCopyMap(dm)
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
			continue
		}
		dm[k] = mergePatch(dm[k], v)
	}
	return dm
}

// mergeTemplate fills the fields a generator's own template leaves empty
// from spec.template (mergo.Merge without override).
func mergeTemplate(gen, base map[string]any) map[string]any {
	if gen == nil {
		return deepCopyMap(base)
	}
	out := deepCopyMap(gen)
	fill(out, base)
	return out
}

func fill(dst, src map[string]any) {
	for k, v := range src {
		cur, ok := dst[k]
		switch {
		case !ok || isZero(cur):
			dst[k] = deepCopy(v)
		default:
			dm, dok := cur.(map[string]any)
			sm, sok := v.(map[string]any)
			if dok && sok {
				fill(dm, sm)
			}
		}
	}
}

// isZero reports a JSON value Go would leave unset: "", 0, false, null, an
// empty list or map.
func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case float64:
		return t == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

var nonSlug = regexp.MustCompile("[^a-z0-9]+")

// slugify is Argo CD's slugify template function: [maxSize [smartTruncate]]
// name → a sanitized, dash-separated slug of at most maxSize (50)
// characters, cut at a dash when smartTruncate (true).
func slugify(args ...any) string {
	max, smart, name := 50, true, ""
	for i, a := range args {
		switch {
		case i == len(args)-1:
			name, _ = a.(string)
		case i == 0:
			if n, ok := a.(int); ok {
				max = n
			}
		case i == 1:
			if b, ok := a.(bool); ok {
				smart = b
			}
		}
	}
	s := strings.Trim(nonSlug.ReplaceAllString(SanitizeName(name), "-"), "-")
	if max > 0 && len(s) > max {
		cut := s[:max]
		if i := strings.LastIndex(cut, "-"); smart && i > 0 && s[max] != '-' {
			cut = cut[:i]
		}
		s = strings.Trim(cut, "-")
	}
	return s
}
