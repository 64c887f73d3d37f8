package stream

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// sameNodes says where two node trees differ, "" if nowhere: every field
// the general reader sets.
func sameNodes(a, b *yaml.Node, at string) string {
	switch {
	case a == nil || b == nil:
		if a != b {
			return at + ": one node is missing"
		}
		return ""
	case a.Kind != b.Kind, a.Style != b.Style, a.Tag != b.Tag, a.Value != b.Value, a.Anchor != b.Anchor,
		a.Alias != b.Alias, a.HeadComment != b.HeadComment, a.LineComment != b.LineComment,
		a.FootComment != b.FootComment, a.Line != b.Line, a.Column != b.Column, len(a.Content) != len(b.Content),
		(a.Content == nil) != (b.Content == nil):
		return fmt.Sprintf("%s: fast %+v, general %+v", at, *a, *b)
	}
	for i := range a.Content {
		if d := sameNodes(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// agreeWithGeneral fails t if the fast reader reads c, and the general
// reader reads it otherwise or not at all; it says whether the fast one
// read it.
func agreeWithGeneral(t testing.TB, c []byte) bool {
	t.Helper()
	fast, ok := fastDocuments(c)
	if !ok {
		return false
	}
	general, err := readDocumentsGeneral(c)
	if err != nil {
		t.Fatalf("the fast reader read what the general one refuses (%v):\n%s", err, c)
	}
	if len(fast) != len(general) {
		t.Fatalf("the fast reader read %d document(s), the general one %d:\n%s", len(fast), len(general), c)
	}
	for i := range fast {
		if d := sameNodes(fast[i].YNode(), general[i].YNode(), fmt.Sprint("document ", i)); d != "" {
			t.Fatalf("the readers disagree at %s:\n%s", d, c)
		}
	}
	return true
}

// fastCases are chunks in the part of YAML the fast reader reads (true)
// or not (false): each it reads must read as the general reader reads it.
var fastCases = []struct {
	in   string
	fast bool
}{
	{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n", true},
	{"---\napiVersion: v1\nkind: ConfigMap\n---\n\n---\nkind: Service\nspec:\n  ports:\n  - port: 80\n    targetPort: 8080\n", true},
	{"a:\n- x\n- y\nb: 1\n", true},
	{"a:\n  - x\n  -   y\nb:\n    c: d\n", true},
	{"a: {b: c, d: [e, f, {g: h}], i: {}}\nj: []\n", true},
	{"a: 'it''s'\nb: \"q\"\n'c': d\n\"e\": f\n", true},
	{"args: [migrate, --wait]\ncpu: 100m\nmem: 128Mi\nn: 0\nm: 123456789012345678\n", true},
	{"a: true\nb: False\nc: NULL\nd: yes\ne: on\nf: nullx\n", true},
	{"image: ghcr.io/a/b:v1@sha256:0123\nurl: http://x.y/z\n", true},
	{"a:   spaced   \nb: trailing  \n", true},
	{"- a\n- b\n", false},                                 // a top-level sequence
	{"a: 1.5\n", false},                                   // a float
	{"a: 0777\n", false},                                  // an octal
	{"a: 2001-12-14\n", false},                            // a timestamp
	{"a: 2001-12-14T21:59:43,10Z\n", false},               // a timestamp with a comma before its fraction (time.Parse takes it)
	{"a: -1\n", false},                                    // a signed number
	{"a: .inf\n", false},                                  // a float word
	{"a: ~\n", false},                                     // a null word the reader does not know
	{"a:\nb: c\n", false},                                 // an empty value
	{"a: |\n  x\n", false},                                // a block scalar
	{"a: b\n  c\n", false},                                // a continued plain scalar
	{"a: \"b\n  c\"\n", false},                            // a quoted scalar over two lines
	{"a: &x b\nc: *x\n", false},                           // an anchor and an alias
	{"a: !!str 1\n", false},                               // a tag
	{"a: b # c\n", false},                                 // a comment
	{"a: \"\\n\"\n", false},                               // an escape
	{"a:\tb\n", false},                                    // a tab
	{"a: b\r\nc: d\r\n", false},                           // CRLF
	{"a: [b, c,]\n", false},                               // a trailing comma
	{"a: {b: c}x\n", false},                               // text after a flow collection
	{"a: [b\n  , c]\n", false},                            // a flow collection over two lines
	{"a: b: c\n", false},                                  // a mapping where a scalar is
	{"<<: {a: b}\n", false},                               // a merge key
	{"%YAML 1.2\n---\na: b\n", false},                     // a directive
	{"--- a: b\n", false},                                 // content on the separator line
	{"a: b\n...\n", false},                                // a document end
	{"  a: b\n", false},                                   // an indented root
	{"a:\n  b: c\n d: e\n", false},                        // a misaligned key
	{"a:\n- b\n  - c\n", false},                           // a misaligned entry
	{"- - a\n", false},                                    // a nested entry on one line
	{"a: {b: c:d}\n", false},                              // a colon in a flow scalar
	{"a : b\n", false},                                    // a space before ':'
	{"a: [b: c]\n", false},                                // a pair in a flow sequence
	{"a: x\xc3\xa9\n", false},                             // not ASCII
	{"a: b\nkey:value\n", false},                          // no space after ':'
	{"a:\n-\n  b\n", false},                               // an entry below its dash
	{"a: 'b''\n", false},                                  // an unclosed quote
	{"a: {b: }\n", false},                                 // an empty flow value
	{"? a\n: b\n", false},                                 // an explicit key
	{"a: - b\n", false},                                   // an entry where a value is
	{"a: b\n- c\n", false},                                // an entry after a mapping
	{"a:\n  - b\n  c: d\n", false},                        // a key after a sequence's entry
	{"a: \"b\"c\n", false},                                // text after a quote
	{"\"a\"x: b\n", false},                                // text between a key's quote and ':'
	{"a: {{b: c}: d}\n", false},                           // a collection as a key
	{"a: [[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]\n", false}, // too deep
	{"a: '0' \n", true},
	{"ports: [{containerPort: 8080}]\nres: {requests: {cpu: 100m, memory: 128Mi}}\n", true},
	{"a:\n\n  b: c\n\n\n  d: [e]\n\nf: g", true},
	{"", true},
	{"\n\n", true},
	{"---\n", true},
}

func TestFastDocumentsAgree(t *testing.T) {
	for _, c := range fastCases {
		if got := agreeWithGeneral(t, []byte(c.in)); got != c.fast {
			t.Errorf("the fast reader read %q: %v, want %v", c.in, got, c.fast)
		}
	}
}

// TestFastDocumentsReadTheBenchRender: the render the speed goals are
// measured on is read by the fast reader, chunk by chunk as the check
// cuts it, as the general reader reads it.
func TestFastDocumentsReadTheBenchRender(t *testing.T) {
	for _, pinned := range []bool{false, true} {
		var b bytes.Buffer
		if err := benchgen.Write(&b, benchgen.Options{Objects: 400, Images: 20, Registry: "ghcr.io", Pinned: pinned}); err != nil {
			t.Fatal(err)
		}
		for i, c := range splitDocuments(b.Bytes(), 8) {
			if !agreeWithGeneral(t, c) {
				t.Fatalf("pinned %v: the fast reader declined chunk %d", pinned, i)
			}
		}
	}
}

// TestFastDocumentsAgreeOnTheTree: every YAML file of the repository's
// test data (real repositories' manifests among them) the fast reader
// reads, it reads as the general reader does; and it reads enough of them
// for that to say something.
func TestFastDocumentsAgreeOnTheTree(t *testing.T) {
	root := filepath.Join("..", "..")
	read, files := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == ".cache" || n == "bin" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if agreeWithGeneral(t, data) {
			read++
		}
		// and document by document, as a file's comments do not stop the
		// others from being read
		for _, c := range splitDocuments(data, bytes.Count(data, []byte("\n---"))+1) {
			agreeWithGeneral(t, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the fast reader read %d of %d files", read, files)
	if files < 100 || read < files/10 {
		t.Fatalf("the fast reader read %d of %d files: too few for the comparison to say anything", read, files)
	}
}

// FuzzFastDocuments: what the fast reader reads, the general reader reads
// the same (every field of every node); it never panics or hangs.
func FuzzFastDocuments(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.in))
	}
	for _, in := range agree {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeWithGeneral(t, data)
	})
}

// TestFastDocumentsRandom: documents put together at random from the
// pieces manifests are written with and the characters YAML gives a
// meaning to, some then changed by a character, read the same by both
// readers wherever the fast one reads them (and it reads enough of them to
// say something).
func TestFastDocumentsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	read := 0
	const n = 40000
	for range n {
		var b strings.Builder
		for d := range 1 + r.IntN(2) {
			if d > 0 || r.IntN(2) == 0 {
				b.WriteString("---\n")
			}
			randomMapping(r, &b, 0, "", 3)
		}
		doc := []byte(b.String())
		for range r.IntN(3) { // some changed by a character or two
			k := r.IntN(len(doc) + 1)
			c := mutations[r.IntN(len(mutations))]
			switch r.IntN(3) {
			case 0:
				doc = append(doc[:k], append([]byte{c}, doc[k:]...)...)
			case 1:
				if k < len(doc) {
					doc[k] = c
				}
			default:
				if k < len(doc) {
					doc = append(doc[:k], doc[k+1:]...)
				}
			}
		}
		if agreeWithGeneral(t, doc) {
			read++
		}
	}
	t.Logf("the fast reader read %d of %d documents", read, n)
	if read < n/10 {
		t.Fatalf("the fast reader read %d of %d documents: too few for the comparison to say anything", read, n)
	}
}

var (
	safeWords   = []string{"a", "b", "name", "image", "true", "null", "0", "7", "100m", "128Mi", "--wait", "v1", "'q'", "\"dq\"", "app-1", "x/y"}
	randomWords = []string{"a", "b", "name", "image", "true", "False", "null", "NULL", "yes", "on", "~", "<<", "0", "00",
		"7", "012", "1.5", "-1", "+1", "0x1F", "0o7", "1_0", "2001-12-14", ".inf", "-.inf", "--wait", "-x", "100m",
		"128Mi", "1e3", "nan", "inf", "x:y", "a b", "http://h/p", "v1@sha256:ab", "it's", "3t", "1:30", "0b11", "1z",
		"'q'", "'it''s'", "\"dq\"", "\"a: b\"", "=", "$x", "(x)", "x,y", "x]", "x[0]", "a-b", "app.kubernetes.io/name"}
	mutations = []byte(" :-,[]{}'\"\n!&*|>?%@`~<.0a")
)

func randomWord(r *rand.Rand) string {
	if r.IntN(8) > 0 {
		return safeWords[r.IntN(len(safeWords))]
	}
	return randomWords[r.IntN(len(randomWords))]
}

// randomMapping writes a block mapping at indentation ind (its first key
// after first, for a sequence's entry), nested up to depth.
func randomMapping(r *rand.Rand, b *strings.Builder, ind int, first string, depth int) {
	pad := strings.Repeat(" ", ind)
	for i := range 1 + r.IntN(4) {
		if i == 0 && first != "" {
			b.WriteString(first)
		} else {
			b.WriteString(pad)
		}
		b.WriteString(randomWord(r) + ":")
		switch k := r.IntN(6); {
		case depth > 0 && k == 0:
			b.WriteString("\n")
			randomMapping(r, b, ind+2+r.IntN(2), "", depth-1)
		case depth > 0 && k == 1:
			b.WriteString("\n")
			randomSequence(r, b, ind+2*r.IntN(2), depth-1)
		case k == 2:
			b.WriteString(" " + randomFlow(r, 2) + "\n")
		default:
			b.WriteString(" " + randomWord(r) + "\n")
		}
		if r.IntN(8) == 0 {
			b.WriteString("\n")
		}
	}
}

func randomSequence(r *rand.Rand, b *strings.Builder, ind, depth int) {
	pad := strings.Repeat(" ", ind)
	for range 1 + r.IntN(3) {
		dash := pad + "-" + strings.Repeat(" ", 1+r.IntN(2))
		switch r.IntN(3) {
		case 0:
			randomMapping(r, b, len(dash), dash, depth)
		case 1:
			b.WriteString(dash + randomFlow(r, 2) + "\n")
		default:
			b.WriteString(dash + randomWord(r) + "\n")
		}
	}
}

func randomFlow(r *rand.Rand, depth int) string {
	var items []string
	for range r.IntN(4) {
		v := randomWord(r)
		if depth > 0 && r.IntN(3) == 0 {
			v = randomFlow(r, depth-1)
		}
		items = append(items, v)
	}
	if r.IntN(2) == 0 {
		return "[" + strings.Join(items, ", ") + "]"
	}
	for i := range items {
		items[i] = randomWord(r) + ": " + items[i]
	}
	return "{" + strings.Join(items, ", ") + "}"
}
