package argo

import (
	"slices"
	"strconv"
	"strings"
)

// Field paths of ignoreDifferences entries. JSON pointers and simple jq
// paths are read into segments, where "*" stands for every element (a jq
// `[]`), so the two forms compare alike: `.webhooks[]?.clientConfig.caBundle`
// is /webhooks/*/clientConfig/caBundle.

// DefaultIgnoreDifferencesAllowed is the allow-list of paths an
// ignoreDifferences entry may hide on every object of a kind: replicas (an
// HPA owns them) and CA bundles (injected by cert-manager and friends). A
// segment `*` matches one segment, `**` any number.
var DefaultIgnoreDifferencesAllowed = []string{"/spec/replicas", "/**/caBundle"}

// wholeObjects are paths that hide a whole object or all of what it runs.
var wholeObjects = [][]string{{}, {"spec"}, {"metadata"}, {"spec", "template"}, {"spec", "template", "spec"}}

// fieldPath is a parsed pointer or jq path. ok is false for an expression
// the gate cannot read as a plain path (a jq select, a pipe): it is never
// taken as allow-listed.
type fieldPath struct {
	segs []string
	ok   bool
	// all is set for a jq recursive descent (`..`), which selects everything.
	all bool
}

// parsePointer reads a JSON pointer (RFC 6901); "" and "/" name the root.
func parsePointer(p string) fieldPath {
	p = strings.TrimSpace(p)
	if p == "" || p == "/" {
		return fieldPath{ok: true}
	}
	if !strings.HasPrefix(p, "/") {
		return fieldPath{}
	}
	segs := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return fieldPath{segs: segs, ok: true}
}

// parseJQ reads a jq path made of .name, ."name", ["name"], [N] and []
// steps, each optionally followed by ?.
func parseJQ(expr string) fieldPath {
	e := strings.Join(strings.Fields(expr), "")
	if strings.Contains(e, "..") {
		return fieldPath{ok: true, all: true}
	}
	if e == "." {
		return fieldPath{ok: true}
	}
	var segs []string
	for len(e) > 0 {
		seg, rest, ok := jqStep(e)
		if !ok {
			return fieldPath{}
		}
		segs = append(segs, seg)
		e = strings.TrimPrefix(rest, "?")
	}
	if len(segs) == 0 {
		return fieldPath{}
	}
	return fieldPath{segs: segs, ok: true}
}

// jqStep reads one step of a jq path.
func jqStep(e string) (seg, rest string, ok bool) {
	switch {
	case strings.HasPrefix(e, ".["):
		return jqStep(e[1:])
	case strings.HasPrefix(e, `."`), strings.HasPrefix(e, `["`):
		start := strings.Index(e, `"`)
		end := strings.Index(e[start+1:], `"`)
		if end < 0 {
			return "", "", false
		}
		seg, rest = e[start+1:start+1+end], e[start+2+end:]
		if e[0] == '[' {
			if !strings.HasPrefix(rest, "]") {
				return "", "", false
			}
			rest = rest[1:]
		}
		return seg, rest, true
	case strings.HasPrefix(e, "["):
		end := strings.Index(e, "]")
		if end < 0 {
			return "", "", false
		}
		inner := e[1:end]
		if inner == "" {
			return "*", e[end+1:], true
		}
		if _, err := strconv.Atoi(inner); err != nil {
			return "", "", false
		}
		return inner, e[end+1:], true
	case strings.HasPrefix(e, "."):
		i := 1
		for i < len(e) && (e[i] == '_' || e[i] == '-' || isAlnum(e[i])) {
			i++
		}
		if i == 1 {
			return "", "", false
		}
		return e[1:i], e[i:], true
	}
	return "", "", false
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// whole reports whether the path selects a whole object: the root, spec,
// metadata or the pod template, or every element under them.
func (p fieldPath) whole() bool {
	if p.all {
		return true
	}
	if !p.ok {
		return false
	}
	segs := p.segs
	for len(segs) > 0 && segs[len(segs)-1] == "*" {
		segs = segs[:len(segs)-1]
	}
	for _, w := range wholeObjects {
		if equalSegs(segs, w) {
			return true
		}
	}
	return false
}

// controllerOwned reports whether the path lies under /status: the
// controller writes that field, never the manifest, so ignoring it cannot
// hide drift of applied content (argocd-autopilot generates
// `jsonPointers: [/status]` on every Application it writes).
func (p fieldPath) controllerOwned() bool {
	return p.ok && !p.all && len(p.segs) > 0 && p.segs[0] == "status"
}

// allowed reports whether the path is under /status or matches one of the
// allow-list patterns.
func (p fieldPath) allowed(patterns []string) bool {
	if !p.ok || p.all {
		return false
	}
	if p.controllerOwned() {
		return true
	}
	for _, pat := range patterns {
		if pp := parsePointer(pat); pp.ok && globSegs(pp.segs, p.segs) {
			return true
		}
	}
	return false
}

// globSegs matches path segments against pattern segments. A wildcard in
// the path (every element) is matched only by a wildcard in the pattern.
func globSegs(pat, path []string) bool {
	if len(pat) == 0 {
		return len(path) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(path); i++ {
			if globSegs(pat[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return false
	}
	if pat[0] != "*" && (path[0] == "*" || pat[0] != path[0]) {
		return false
	}
	return globSegs(pat[1:], path[1:])
}

func equalSegs(a, b []string) bool { return slices.Equal(a, b) }

// humanManager reports whether a field manager is a person at a terminal:
// kubectl and its subcommands (kubectl-edit, kubectl-patch,
// kubectl-client-side-apply, kubectl-scale, …).
func humanManager(m string) bool {
	return m == "kubectl" || strings.HasPrefix(m, "kubectl-")
}
