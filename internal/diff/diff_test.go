package diff

import (
	"encoding/base64"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

func parse(t testing.TB, s string) []*yaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

const deployA = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, annotations: {config.kubernetes.io/origin: "path: a.yaml"}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: "web:1"}
      - {name: proxy, image: "envoy:1"}
`

func TestObjectsFieldLevel(t *testing.T) {
	head := strings.NewReplacer(`"web:1"`, `"web:2"`, "replicas: 2", "replicas: 3", "a.yaml", "moved/a.yaml").Replace(deployA)
	// The containers swapped places: matched by name, only the image changed.
	head = strings.Replace(head, "      - {name: web, image: \"web:2\"}\n      - {name: proxy, image: \"envoy:1\"}\n", "      - {name: proxy, image: \"envoy:1\"}\n      - {name: web, image: \"web:2\"}\n", 1)
	got := Objects(parse(t, deployA), parse(t, head+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\n"))
	if len(got) != 2 || got[0].Change != Added || got[0].Key.String() != "ConfigMap new" || got[1].Change != Changed {
		t.Fatalf("changes: %+v", got)
	}
	var lines []string
	for _, f := range got[1].Fields {
		lines = append(lines, f.Text())
	}
	want := []string{`spec.replicas: "2" → "3"`, `spec.template.spec.containers[name=web].image: "web:1" → "web:2"`}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func secret(pw, tok string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\nstringData: {password: " + pw + "}\ndata: {token: " + base64.StdEncoding.EncodeToString([]byte(tok)) + "}\n"
}

func TestSecretsShowKeysAndSizesOnly(t *testing.T) {
	got := Objects(parse(t, secret("old-pass", "t1")), parse(t, secret("new-password", "t1")+"---\n"+strings.Replace(secret("x", "added-tok"), "name: s", "name: s2", 1)))
	var all []string
	for _, o := range got {
		all = append(all, o.Key.String()+" "+o.Change)
		for _, f := range o.Fields {
			all = append(all, f.Text())
		}
	}
	text := strings.Join(all, "\n")
	for _, s := range []string{"stringData.password: changed (8 → 12 bytes)", "Secret s2 added", "data.token: added (9 bytes)"} {
		if !strings.Contains(text, s) {
			t.Errorf("lacks %q:\n%s", s, text)
		}
	}
	for _, v := range []string{"old-pass", "new-password", "added-tok", base64.StdEncoding.EncodeToString([]byte("added-tok"))} {
		if strings.Contains(text, v) {
			t.Errorf("prints the value %q:\n%s", v, text)
		}
	}
	if strings.Contains(text, "data.token: changed") {
		t.Errorf("an unchanged key is reported:\n%s", text)
	}
}

func TestFindingsNewFixedUnchanged(t *testing.T) {
	f := func(name, msg string) finding.Finding {
		return finding.Finding{Rule: "image-digest", Severity: finding.SeverityError, Message: msg, ResourceRef: &finding.ResourceRef{Kind: "Deployment", Name: name}}
	}
	base := []finding.Finding{f("web", "a (set by x.yaml:1)"), f("api", "b")}
	head := []finding.Finding{f("web", "a (set by y.yaml:9)"), f("cron", "c")}
	n, fixed, same := Findings(base, head)
	if len(n) != 1 || n[0].ResourceRef.Name != "cron" || len(fixed) != 1 || fixed[0].ResourceRef.Name != "api" || len(same) != 1 {
		t.Errorf("new %v fixed %v unchanged %v", n, fixed, same)
	}
}

func fakeReport(n int, text string) *Report {
	r := &Report{Base: "main", Head: "working tree", Renderers: map[string]string{"kustomize": "api v0"}}
	for i := range n {
		r.Units = append(r.Units, UnitChange{Input: "-k app" + strings.Repeat("x", i%7), Objects: []ObjectChange{{Key: Key{Kind: "ConfigMap", Name: text}, Change: Changed,
			Fields: []FieldChange{{Path: "data.v", Base: text, Head: text + "!"}}}}})
	}
	return r
}

func TestMarkdownLimit(t *testing.T) {
	r := fakeReport(300, strings.Repeat("y", 300))
	one := r.Markdown(MaxComment, false)
	if len(one) != 1 || runes(one[0]) > MaxComment || !strings.Contains(one[0], "… and ") {
		t.Fatalf("cut: %d part(s), %d runes", len(one), runes(one[0]))
	}
	parts := r.Markdown(MaxComment, true)
	if len(parts) < 2 {
		t.Fatalf("split into %d part(s)", len(parts))
	}
	total := 0
	for _, p := range parts {
		if runes(p) > MaxComment {
			t.Errorf("a part of %d runes", runes(p))
		}
		total += strings.Count(p, "<details><summary><b>")
	}
	if total != 300 {
		t.Errorf("%d of 300 sections in the parts", total)
	}
}

// FuzzMarkdown: values in the report come from the pull request. Every
// part fits the limit, and no value becomes markup.
func FuzzMarkdown(f *testing.F) {
	f.Add("<script>alert(1)</script>", 3, 2000, false)
	f.Add("```\n# heading [x](http://x)", 40, 1000, true)
	f.Add(strings.Repeat("é", 500), 10, 300, true)
	// The head alone over the limit, with nothing to split: a crasher
	// the fuzzer found (the part was returned uncut).
	f.Add("0", 0, 222, true)
	f.Fuzz(func(t *testing.T, text string, n, limit int, split bool) {
		if n < 0 || n > 50 || limit < 200 || limit > MaxComment {
			return
		}
		for _, p := range fakeReport(n, text).Markdown(limit, split) {
			if runes(p) > limit {
				t.Fatalf("part of %d runes over %d", runes(p), limit)
			}
			if strings.Contains(text, "<") && strings.Contains(p, text) && !strings.Contains(p, "```") {
				t.Fatalf("raw value outside a code block: %q", text)
			}
		}
	})
}

// FuzzObjects: two renders from a pull request are compared; the walk
// never panics and a Secret's value is never printed.
func FuzzObjects(f *testing.F) {
	f.Add(secret("aaaa-secret", "tok"), secret("bbbb-secret", "tok2"), "aaaa-secret")
	f.Add(deployA, strings.Replace(deployA, "web:1", "web:2", 1), "zzzz-none")
	f.Add("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: &a {k: *a}\n", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: [1]\n", "zzzz")
	f.Fuzz(func(t *testing.T, a, b, value string) {
		// Renders reach diff through the pipeline's reader, which
		// resolves aliases and refuses cycles (render.Parse).
		base, err1 := render.Parse([]byte(a), "a.yaml")
		head, err2 := render.Parse([]byte(b), "b.yaml")
		if err1 != nil || err2 != nil {
			return
		}
		for _, o := range Objects(base, head) {
			if o.Key.Kind != "Secret" || o.Key.Group != "" || len(value) < 6 {
				continue
			}
			for _, fc := range o.Fields {
				if (strings.HasPrefix(fc.Path, "data.") || strings.HasPrefix(fc.Path, "stringData.")) && (fc.Base != "" || fc.Head != "") {
					t.Fatalf("a Secret field shows a value: %+v", fc)
				}
			}
		}
	})
}
