package stream

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// aliasCases are streams CheckAliases must refuse, and why.
var aliasRefused = map[string]struct{ in, want string }{
	"mapping in itself": {"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: c\n  labels: *m\n", "line 5: alias *m is inside the node its anchor &m names (line 3)"},
	"value in itself":   {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: &d\n  a: *d\n", "alias *d is inside"},
	"list in itself":    {"a: &l\n- x\n- *l\n", "alias *l is inside"},
	"deep in itself":    {"a: &top\n  b:\n    c:\n    - d: {e: *top}\n", "alias *top is inside"},
	"second document":   {"kind: A\n---\nkind: B\nx: &x {y: *x}\n", "document 2 (counting from 1)"},
	"billion laughs":    {laughs(9, 9), "excessive aliasing"},
	"JSON-like keys":    {`{"apiVersion":"v1","kind":"ConfigMap","metadata":&m {"name":"c","labels":*m}}`, "alias *m is inside"},
	"after a BOM":       {"\ufeff&m {a: *m}\n", "alias *m is inside"},
	// go-yaml's scanner breaks lines at NEL, LINE SEPARATOR and PARAGRAPH
	// SEPARATOR too (is_break): a node starts after one.
	"after a LINE SEPARATOR":     {"a: &a {b: [\u2028*a]}\n", "line 1: alias *a is inside the node its anchor &a names (line 1)"},
	"after a NEL":                {"a: &a {b: [\u0085*a]}\n", "alias *a is inside"},
	"after PARAGRAPH SEPARATORs": {"a: [\u2029&a {b: [\u2029*a]}]\n", "alias *a is inside"},
	"LINE SEPARATOR laughs":      {strings.NewReplacer(" *", "\u2028*", "[*", "[\u2028*").Replace(laughs(9, 9)), "excessive aliasing"},
	"after a flow ?":             {"{&a x: 1, b: &c {?*c : y}}\n", "alias *c is inside"},
	"UTF-16":                     {utf16LE("a: &a {b: *a}\n"), "alias *a is inside"},
}

// utf16LE is s in UTF-16, little-endian, after a byte order mark: go-yaml
// (and so kustomize) reads it.
func utf16LE(s string) string {
	b := []byte{0xff, 0xfe}
	for _, r := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, r)
	}
	return string(b)
}

// laughs is a "billion laughs" stream: levels anchors, each a list of
// width aliases of the one before.
func laughs(levels, width int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a0: &a0 [lol]\n")
	for i := 1; i <= levels; i++ {
		b.WriteString("  a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := range width {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestCheckAliasesRefuses: an alias inside its own anchor, anywhere in any
// document, and aliases that expand without bound are refused, naming the
// document and line.
func TestCheckAliasesRefuses(t *testing.T) {
	for name, c := range aliasRefused {
		err := CheckAliases([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
}

// TestCheckAliasesAccepts: what kustomize's reader expands is accepted,
// and kyaml reads it as CheckAliases let it through: aliases of earlier
// nodes, merge keys, the same anchor used many times, a wide but bounded
// expansion, and bytes that are not YAML at all (a generator's .env file).
func TestCheckAliasesAccepts(t *testing.T) {
	for name, in := range map[string]string{
		"no aliases":                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  glob: '*.example.com'\n  amp: a&b\n",
		"sibling":                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n c\n  labels: {app: *n}\n",
		"merge key":                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: &l {a: b}\n  annotations:\n    <<: *l\n    c: d\n",
		"reused often":               "base: &b {x: 1}\nitems: [*b, *b, *b, *b, *b, *b, *b, *b]\n",
		"bounded":                    laughs(3, 9),
		"not yaml":                   "KEY=*value & more\n\t: : [\n",
		"two documents, same anchor": "a: &x 1\nb: *x\n---\na: &x {k: v}\nb: *x\n",
	} {
		if err := CheckAliases([]byte(in)); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "not yaml" {
			continue
		}
		done := make(chan error, 1)
		go func() { _, err := kio.FromBytes([]byte(in)); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: accepted, and kyaml's reader fails: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: accepted, and kyaml's reader is still expanding it after 10s", name)
		}
	}
}

// FuzzCheckAliases feeds CheckAliases arbitrary bytes (it reads every file
// kustomize reads for the gate): it never panics or hangs, and what it
// accepts as YAML kyaml's reader reads without the stack overflow or the
// unbounded expansion it guards against (a bounded expansion on this
// input: at most maxExpanded nodes a document).
func FuzzCheckAliases(f *testing.F) {
	for _, c := range aliasRefused {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Add([]byte("a: &l {k: v}\nb:\n  <<: *l\n"))
	f.Add([]byte(laughs(3, 3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		if err := CheckAliases(data); err != nil {
			return
		}
		_, _ = kio.FromBytes(data) // must return: no cycle, bounded
	})
}

// TestCheckAliasesCountsOnlyExpansion: only what aliases add counts
// toward the bound, not nodes as written (a generator's 400 KB JSON file
// whose strings hold "*" and "&" was refused), and a large anchor named
// from thousands of later documents is counted once (each document walked
// it again: 24 s for 1,000 of them).
func TestCheckAliasesCountsOnlyExpansion(t *testing.T) {
	big := `{"n": "* & *", "v": [` + strings.Repeat("1, ", 250_000) + "1]}\n"
	if err := CheckAliases([]byte(big)); err != nil {
		t.Errorf("a large document without aliases: %v", err)
	}
	var list strings.Builder
	list.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 3500 {
		list.WriteString("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c" + strconv.Itoa(i) + "}, data: {cron: \"*/5 * * * *\", q: \"?a=1&b=2\", r: &r" + strconv.Itoa(i) + " x, s: *r" + strconv.Itoa(i) + "}}\n")
	}
	if err := CheckAliases([]byte(list.String())); err != nil {
		t.Errorf("a large List with an alias in each item: %v", err)
	}
	// Below the bound as written plus what its aliases add, past it with
	// one more level of the same shape.
	wide := "x: &x [" + strings.Repeat("a, ", 150_000) + "a]\n"
	if err := CheckAliases([]byte(wide + "y: *x\n")); err != nil {
		t.Errorf("an alias adding 150,001 nodes: %v", err)
	}
	if err := CheckAliases([]byte(wide + "y: *x\nz: *x\n")); err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("aliases adding 300,002 nodes: got %v", err)
	}
	var docs strings.Builder
	docs.WriteString("x: &x [" + strings.Repeat("a, ", 190_000) + "a]\n")
	for range 5000 {
		docs.WriteString("---\nb: *x\n")
	}
	start := time.Now()
	_ = CheckAliases([]byte(docs.String())) // kyaml refuses the alias to another document
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("5,000 documents naming one large anchor: %v", took)
	}
}

// TestMayHold: the prefilter finds every anchor and alias where a node can
// start, and lets through bytes that cannot hold one.
func TestMayHold(t *testing.T) {
	for _, c := range []struct {
		in    string
		c     byte
		holds bool
	}{
		{"a: &x 1\n", '&', true},
		{"&x 1\n", '&', true},
		{"b: *x\n", '*', true},
		{"- *x\n", '*', true},
		{"[*x, *y]\n", '*', true},
		{"{a: *x}\n", '*', true},
		{"a:\t*x\n", '*', true},
		{`{"a":*x}`, '*', true},
		{`{"a":&x 1}`, '&', true},
		{"\ufeff&x 1\n", '&', true},
		{"a: [\u2028*x]\n", '*', true},
		{"a: [\u0085*x]\n", '*', true},
		{"a:\u2029&x 1\n", '&', true},
		{"{?*x : y}\n", '*', true},
		{"{a: b}&x c\n", '&', true},
		{utf16LE("a: *x\n"), '*', true},
		{"a: é*x\n", '*', false}, // é ends in 0xa9, as PARAGRAPH SEPARATOR does
		{"a: ¿*x\n", '*', false}, // ¿ ends in 0xbf, as a BOM does
		{"a: b?*x\n", '*', true}, // a ? in a plain scalar: parsed, harmless
		{"cron: \"*/5 1 * * 1\"\n", '*', false},
		{"cron: \"*/5 * * * *\"\n", '*', true}, // "*\"" could be an alias of an anchor named \"
		{"q: a&b\n", '&', false},
		{"glob: '*.example.com'\n", '*', false},
		{"a: b *\n", '*', false},
		{"a: *\n", '*', false},
		{"", '*', false},
	} {
		if got := mayHold([]byte(c.in), c.c); got != c.holds {
			t.Errorf("mayHold(%q, %q) = %v, want %v", c.in, c.c, got, c.holds)
		}
	}
}
