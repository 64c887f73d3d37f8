package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// matrixNS is the namespace of case i.
func matrixNS(i int) string { return fmt.Sprintf("m%02d", i) }

func subst(s, ns string) string { return strings.ReplaceAll(s, "NS", ns) }

func parseDocs(t testing.TB, s string) []*yaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(s))
	if err != nil {
		t.Fatalf("parse YAML: %v\n%s", err, s)
	}
	return nodes
}

// caseInputs splits a case into what the gate gets: the policy set (setup
// without Namespaces) and the render (the case's Namespaces, then its
// objects). objStart is the index of the first object in the render.
func caseInputs(t testing.TB, i int, c matrixCase) (set *Set, render []*yaml.RNode, objStart int) {
	t.Helper()
	ns := matrixNS(i)
	render = parseDocs(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	var policyDocs []*yaml.RNode
	for _, d := range parseDocs(t, subst(c.setup, ns)) {
		if d.GetKind() == "Namespace" {
			render = append(render, d)
			continue
		}
		policyDocs = append(policyDocs, d)
	}
	set, err := Load(Source{Name: c.name, Docs: policyDocs})
	if err != nil {
		t.Fatalf("%s: load policies: %v", c.name, err)
	}
	objStart = len(render)
	for _, o := range c.objects {
		render = append(render, parseDocs(t, subst(o.yaml, ns))...)
	}
	return set, render, objStart
}

// verdict is the comparable outcome for one object.
type verdict struct {
	deny           bool
	status, reason string
	warnings       []string
	audits         []string
	ignored        []string
	noVerdict      []string
}

func gateVerdicts(t testing.TB, i int, c matrixCase) ([]verdict, *Report) {
	t.Helper()
	set, render, start := caseInputs(t, i, c)
	rep, err := Evaluate(context.Background(), set, render, Options{})
	if err != nil {
		t.Fatalf("%s: evaluate: %v", c.name, err)
	}
	out := make([]verdict, len(c.objects))
	for _, r := range rep.Results {
		if r.Index < start {
			continue
		}
		v := &out[r.Index-start]
		switch r.Action {
		case Deny:
			if v.deny {
				t.Errorf("%s object %d: two denials (the API server reports one): %q", c.name, r.Index-start, r.Message)
			}
			v.deny, v.status, v.reason = true, r.Status, string(r.Reason)
		case Warn:
			v.warnings = append(v.warnings, r.Message)
		case Audit:
			v.audits = append(v.audits, r.Message)
		case Ignored:
			v.ignored = append(v.ignored, r.Message)
		case NoVerdict:
			v.noVerdict = append(v.noVerdict, r.Message)
		}
	}
	return out, rep
}

func TestMatrixGate(t *testing.T) {
	n := 0
	for i, c := range matrixCases {
		got, rep := gateVerdicts(t, i, c)
		for j, o := range c.objects {
			n++
			name := fmt.Sprintf("%s/%d", c.name, j)
			checkWant(t, name, subst(o.want, matrixNS(i)), got[j])
			if (c.server[j] != "") != strings.Contains(o.want, "noverdict:") {
				t.Errorf("%s: the API server's verdict is recorded exactly where the gate has none (want %q, server %q)", name, o.want, c.server[j])
			}
		}
		unbound := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Action == Unbound })
		if unbound != c.unbound {
			t.Errorf("%s: unbound reported = %v, want %v (%+v)", c.name, unbound, c.unbound, rep.Results)
		}
	}
	if n < 40 {
		t.Errorf("the matrix has %d objects, want at least 40", n)
	}
	t.Logf("%d cases, %d objects", len(matrixCases), n)
}

// wantOf splits a want into the deny substring and the substrings wanted
// in each list.
func wantOf(t *testing.T, name, want string) (deny string, lists map[string][]string) {
	t.Helper()
	lists = map[string][]string{}
	for _, part := range strings.Split(want, " & ") {
		kind, text, _ := strings.Cut(part, ":")
		switch kind {
		case "admit":
		case "deny":
			deny = text
		case "warn", "audit", "ignored", "noverdict":
			lists[kind] = append(lists[kind], text)
		default:
			t.Fatalf("%s: bad want %q", name, want)
		}
	}
	return deny, lists
}

func checkWant(t *testing.T, name, want string, v verdict) {
	t.Helper()
	wantDeny, lists := wantOf(t, name, want)
	if (wantDeny != "") != v.deny || !strings.Contains(v.status, wantDeny) {
		t.Errorf("%s: deny = %v %q, want %q", name, v.deny, v.status, wantDeny)
	}
	checkList(t, name, "warn", lists["warn"], v.warnings)
	checkList(t, name, "audit", lists["audit"], v.audits)
	checkList(t, name, "ignored", lists["ignored"], v.ignored)
	checkList(t, name, "no verdict", lists["noverdict"], v.noVerdict)
}

// checkList wants one result per wanted substring, in any order.
func checkList(t *testing.T, name, what string, want, got []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %s = %q, want %d containing %q", name, what, got, len(want), want)
		return
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && strings.Contains(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("%s: %s = %q, want one containing %q", name, what, got, w)
		}
	}
}

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func mustJSON(t testing.TB, s string) []byte {
	t.Helper()
	docs := parseDocs(t, s)
	if len(docs) != 1 {
		t.Fatalf("want one document, got %d", len(docs))
	}
	b, err := docs[0].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
