package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// agree is a table of streams kubectl accepts; the parser must produce
// exactly the objects kubectl decodes from each.
var agree = map[string]string{
	"alias image": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - {name: app, image: &img "nginx:1.27"}
      - name: side
        image: *img
`,
	"merge key": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - &base {name: app, image: "nginx:latest", imagePullPolicy: Always}
      - <<: *base
        name: side
      - <<: [{image: "evil:1", name: lost}, *base]
        name: third
`,
	"merge keys where they stand": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx:1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000
        <<: {image: "nginx:latest"}
      - name: side
        <<: {image: "nginx:1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000"}
        <<: {image: "nginx:latest"}
`,
	"anchored parts": `apiVersion: v1
kind: ConfigMap
metadata: &meta
  name: a
  labels: &l {app: x}
data: *l
`,
	"DeploymentList": `apiVersion: apps/v1
kind: DeploymentList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: a}
  spec: {template: {spec: {containers: [{name: c, image: "redis:7"}]}}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
`,
	"JSON":            `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}, "data": {"a": "1"}}`,
	"empty documents": "---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n",
}

// refuse is a table of streams the parser must refuse, and a word its
// error must hold.
var refuse = map[string][2]string{
	"duplicate image key": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000
        image: evil:latest
`, `key "image" already defined at line 9`},
	"list with a map as items":    {"apiVersion: v1\nkind: List\nitems: {a: 1}\n", "List items is a mapping"},
	"list item not an object":     {"apiVersion: v1\nkind: List\nitems: [1]\n", "item 0 is a scalar"},
	"list item without kind":      {"apiVersion: v1\nkind: List\nitems: [{a: 1}]\n", "no apiVersion or kind"},
	"metadata a list":             {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  -\n", "line 4: metadata is a list"},
	"metadata an alias of a list": {"apiVersion: v1\nkind: ConfigMap\nx: &m [a]\nmetadata: *m\n", "metadata is a list"},
	"metadata a list of two":      {"apiVersion: v1\nkind: ConfigMap\nmetadata: [name, x]\n", "metadata is a list"},
	"list item metadata a list":   {"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: [a]}]\n", "List item 0: metadata is a list"},
	"nested List": {`apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: inner}}
`, "a list inside a list"},
	"anchor from another document": {`apiVersion: v1
kind: ConfigMap
metadata: &meta {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: *meta
`, "unknown anchor"},
	"bare sequence":                      {"- a\n", "a list, not a Kubernetes object"},
	"scalar":                             {"hello\n", "a scalar"},
	"no kind":                            {"foo: bar\n", "no apiVersion and kind"},
	"alias to nothing":                   {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: *x}\n", "unknown anchor"},
	"merge of a scalar":                  {"apiVersion: v1\nkind: ConfigMap\nmetadata: {<<: 1, name: a}\n", "merge key"},
	"invalid UTF-8 after a syntax error": {"apiVersion: v1\nkind: ConfigMap\nmetadata {name: a}\n---\napiVersion: v1\nkind: Co\x87fiaMap\n", "line 6: invalid UTF-8 (byte 0x87)"},
	"merge of an alias of a list":        {"apiVersion: v1\nkind: ConfigMap\nx: &s [{a: b}]\nmetadata: {name: a, <<: *s}\n", "an alias of a list"},
	"recursive alias":                    {"apiVersion: v1\nkind: ConfigMap\ndata: &a\n  x: *a\n", "a"},
	"billion laughs": {`apiVersion: v1
kind: ConfigMap
a: &a ["x","x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
`, "excessive aliasing"},
}

func TestParseAgreesWithKubectl(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	for name, in := range agree {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(in), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			// `kubectl label --local` decodes as apply does, offline, and
			// prints what it decoded.
			r := testutil.Run(t, t.TempDir(), in, nil, kubectl, "label", "--local", "-f", "-", "oracle=1", "-o", "json")
			if r.Code != 0 {
				t.Fatalf("kubectl refused the input: %s", r.Stderr)
			}
			want := kubectlObjects(t, r.Stdout)
			if len(got) != len(want) {
				t.Fatalf("%d objects, kubectl decodes %d", len(got), len(want))
			}
			for i, n := range got {
				if g := plain(t, n); !reflect.DeepEqual(g, want[i]) {
					t.Errorf("object %d:\n got %v\nwant %v", i, g, want[i])
				}
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for name, c := range refuse {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(c[0]), "in.yaml")
			if err == nil {
				t.Fatalf("accepted: %d objects", len(got))
			}
			if !strings.Contains(err.Error(), c[1]) || !strings.Contains(err.Error(), "in.yaml") {
				t.Errorf("error %q should name the file and say %q", err, c[1])
			}
		})
	}
}

// Every refused input is also refused by kubectl, except duplicate keys,
// which kubectl's lenient client-side decoding takes (the last wins) and
// its strict validation rejects: the gate sides with the strict one.
func TestRefusedByKubectlToo(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	for _, name := range []string{"list with a map as items", "bare sequence", "scalar", "list item without kind", "no kind", "nested List", "anchor from another document", "merge of an alias of a list"} {
		r := testutil.Run(t, t.TempDir(), refuse[name][0], nil, kubectl, "label", "--local", "-f", "-", "oracle=1", "-o", "json")
		if r.Code == 0 {
			t.Errorf("%s: kubectl accepted it: %s", name, r.Stdout)
		}
	}
}

func TestParseAnnotatesPathAndIndex(t *testing.T) {
	got, err := Parse([]byte(agree["DeploymentList"]+"---\n"+agree["JSON"]), "x.yaml")
	if err != nil || len(got) != 3 {
		t.Fatalf("%d objects, %v", len(got), err)
	}
	for i, n := range got {
		a := n.GetAnnotations()
		if a[kioutil.PathAnnotation] != "x.yaml" || a[kioutil.IndexAnnotation] != []string{"0", "1", "2"}[i] {
			t.Errorf("object %d annotations %v", i, a)
		}
	}
}

func TestParseLargeStreamInOrder(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("}\ndata: &d {a: b}\nmore: *d\n")
	}
	got, err := Parse([]byte(b.String()), "big.yaml")
	if err != nil || len(got) != 5000 {
		t.Fatalf("%d objects, %v", len(got), err)
	}
	if s, _ := got[4999].GetString("more.a"); s != "b" {
		t.Errorf("alias not resolved in the last chunk: %q", s)
	}
	// Parsed in chunks, every node still has its line in the whole stream
	// (findings point at it): object i starts at line 6i+2, its data at 6i+5.
	for _, i := range []int{0, 1, 2500, 4999} {
		if l := got[i].YNode().Line; l != 6*i+2 {
			t.Errorf("object %d starts at line %d, want %d", i, l, 6*i+2)
		}
		if d := got[i].Field("data"); d == nil || d.Key.YNode().Line != 6*i+5 {
			t.Errorf("object %d: data is not at line %d", i, 6*i+5)
		}
	}
}

func TestReadAllCaps(t *testing.T) {
	if _, err := ReadAll(strings.NewReader("12345"), 5, "x"); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	_, err := ReadAll(strings.NewReader("123456"), 5, "stdin")
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "stdin is larger than 5 bytes") {
		t.Fatalf("over the cap: %v", err)
	}
}

// TestReadAllFile: a regular file is read into one buffer of its size, and
// the cap still decides (a file at the cap is read, one byte more is not).
func TestReadAllFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "render.yaml")
	data := bytes.Repeat([]byte("a: b\n"), 200_000)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(limit int64) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return ReadAll(f, limit, path)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := read(int64(len(data)))
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("at the cap: %d bytes, %v", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(data))*5/4 {
		t.Errorf("reading a %d-byte file allocated %d bytes", len(data), alloc)
	}
	var tl *TooLargeError
	if _, err := read(int64(len(data)) - 1); !errors.As(err, &tl) {
		t.Fatalf("over the cap: %v", err)
	}
}

// kubectlObjects reads kubectl's -o json: objects one after another, or a
// List of them.
func kubectlObjects(t *testing.T, out string) []any {
	t.Helper()
	var objs []any
	d := json.NewDecoder(strings.NewReader(out))
	for d.More() {
		var v map[string]any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if items, ok := v["items"].([]any); ok && v["kind"] == "List" {
			objs = append(objs, items...)
		} else {
			objs = append(objs, v)
		}
	}
	for _, o := range objs {
		m := o.(map[string]any)["metadata"].(map[string]any)
		labels := m["labels"].(map[string]any)
		delete(labels, "oracle")
		if len(labels) == 0 {
			delete(m, "labels")
		}
	}
	return objs
}

// plain is a parsed object as JSON data, without the reader's annotations.
func plain(t *testing.T, n *yaml.RNode) any {
	t.Helper()
	n = n.Copy()
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		t.Fatal(err)
	}
	for k := range n.GetAnnotations() {
		if strings.Contains(k, "config.kubernetes.io/") {
			_ = n.PipeE(yaml.ClearAnnotation(k))
		}
	}
	if a := n.GetAnnotations(); len(a) == 0 {
		_ = n.PipeE(yaml.Lookup("metadata"), yaml.Clear("annotations"))
	}
	s, err := n.String()
	if err != nil {
		t.Fatal(err)
	}
	j, err := sigsyaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.NewDecoder(bytes.NewReader(j)).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// gcPercent reads the garbage collector's percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLargeReadLeavesGC: a large stream read (and one that fails) leaves the
// collector's percentage as it found it (how pauses nest is gcfloor's
// TestPauseWithoutFloor).
func TestLargeReadLeavesGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	var big strings.Builder
	for i := 0; big.Len() <= parallelAbove; i++ {
		fmt.Fprintf(&big, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	for _, in := range []string{big.String(), big.String() + "---\n[unclosed\n"} {
		_, err := parseChunks([]byte(in), "big.yaml", nil, true)
		if p := gcPercent(); p != 150 {
			t.Fatalf("after reading a large stream (err %v) GOGC is %d, want 150", err, p)
		}
	}
}

// A large stream is parsed and checked chunk by chunk on every core; what
// it reports must be what one pass over the whole stream reports: the
// document counted in the whole stream, and a YAML error anywhere before a
// document that is no object.
func TestParseLargeStreamErrorsAsOnePass(t *testing.T) {
	var b strings.Builder
	docs := 0
	for b.Len() <= 3*parallelAbove {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", docs)
		docs++
	}
	big := b.String()
	noKind := "---\napiVersion: v1\nmetadata: {name: fragment}\n"
	want := fmt.Sprintf("parsing big.yaml: document %d (counting from 1): not a Kubernetes object: it has no kind", docs+1)
	_, err := Parse([]byte(big+noKind), "big.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a fragment after %d objects: %v, want %q", docs, err, want)
	}
	// Two fragments in different chunks: the first in the stream decides.
	_, err = Parse([]byte(big+noKind+big+noKind), "big.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("two fragments: %v, want %q", err, want)
	}
	// The fragment in the first chunk, a YAML error in the last: the YAML
	// error decides, as when every chunk was parsed before any was checked.
	in := noKind + big + "---\n[unclosed\n"
	_, err = Parse([]byte(in), "big.yaml")
	// The YAML error names the line the YAML reader names reading the
	// whole stream in one piece, however it was cut.
	_, whole := readDocuments([]byte(in))
	if whole == nil || !strings.HasPrefix(whole.Error(), "yaml: line ") {
		t.Fatalf("the YAML reader on the whole stream: %v", whole)
	}
	wantYAML := "parsing big.yaml: " + whole.Error()
	if err == nil || err.Error() != wantYAML {
		t.Errorf("a fragment first and a YAML error last: %v, want %q", err, wantYAML)
	}
	_, err = ParseEach([]byte(in), "big.yaml", func(int, []*yaml.RNode) {})
	if err == nil || err.Error() != wantYAML {
		t.Errorf("cut finer: %v, want %q", err, wantYAML)
	}
}

// ParseEach returns what Parse returns, and tells each of every object
// once, annotated, numbered in the stream, while the stream is read: in
// many runs for a large stream (lists flattened across them), in one for
// a small one. A stream that does not parse gives Parse's error.
func TestParseEachAsParse(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() <= 5*eachChunkBytes; i++ {
		if i%97 == 0 {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l%da}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l%db}}\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: &d {a: b}\nmore: *d\n", i)
	}
	big := b.String()
	for _, in := range []string{agree["DeploymentList"] + "---\n" + agree["JSON"], big} {
		want, err := Parse([]byte(in), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		told := make([]*yaml.RNode, len(want))
		runs := 0
		got, err := ParseEach([]byte(in), "x.yaml", func(first int, objs []*yaml.RNode) {
			mu.Lock()
			defer mu.Unlock()
			runs++
			for j, o := range objs {
				if told[first+j] != nil {
					t.Errorf("object %d told twice", first+j)
				}
				told[first+j] = o
				if a := o.GetAnnotations(); a[kioutil.PathAnnotation] != "x.yaml" || a[kioutil.IndexAnnotation] != strconv.Itoa(first+j) {
					t.Errorf("object %d told with annotations %v", first+j, a)
				}
			}
		})
		if err != nil || len(got) != len(want) {
			t.Fatalf("%d objects, %v; Parse: %d", len(got), err, len(want))
		}
		for i := range want {
			if got[i].MustString() != want[i].MustString() || got[i].YNode().Line != want[i].YNode().Line {
				t.Fatalf("object %d: ParseEach\n%s\nParse\n%s", i, got[i].MustString(), want[i].MustString())
			}
			if told[i] != got[i] {
				t.Fatalf("object %d: not told, or told another node", i)
			}
		}
		if len(in) > eachChunkBytes && runs < 5 {
			t.Errorf("%d bytes told in %d runs: not as it was read", len(in), runs)
		}
	}
	// Errors are Parse's, wherever they are.
	for _, in := range []string{big + "---\napiVersion: v1\nmetadata: {name: fragment}\n" + big, big + "---\n[unclosed\n", "---\n[unclosed\n" + big} {
		_, want := Parse([]byte(in), "x.yaml")
		_, got := ParseEach([]byte(in), "x.yaml", func(int, []*yaml.RNode) {})
		if want == nil || got == nil || chunkLine.ReplaceAllString(got.Error(), "") != chunkLine.ReplaceAllString(want.Error(), "") {
			t.Errorf("ParseEach error %v, Parse error %v", got, want)
		}
	}
}
