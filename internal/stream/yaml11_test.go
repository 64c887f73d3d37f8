package stream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// yaml11Scalars are plain scalars whose reading may differ between YAML
// 1.1 (kubectl: sigs.k8s.io/yaml over go-yaml v2) and YAML 1.2 (go-yaml
// v3: the gate's reader, kyaml, kustomize), each with what kubectl was seen
// decoding from `v: X` and from `X: v` (the key as JSON holds it); "" where
// kubectl cannot decode the document.
var yaml11Scalars = []struct{ scalar, value, key string }{
	// YAML 1.1 booleans: strings in YAML 1.2.
	{"on", `true`, `"true"`},
	{"On", `true`, `"true"`},
	{"OFF", `false`, `"false"`},
	{"yes", `true`, `"true"`},
	{"No", `false`, `"false"`},
	{"y", `true`, `"true"`},
	{"N", `false`, `"false"`},
	{"!!bool yes", `true`, `"true"`},
	// Read alike in both (go-yaml v3 keeps the 1.1 integers), but a key
	// is the JSON string of its value.
	{"true", `true`, `"true"`},
	{"0777", `511`, `"511"`},
	{"0o17", `15`, `"15"`},
	{"1_000", `1000`, `"1000"`},
	{"0b101", `5`, `"5"`},
	{"-0b11", `-3`, `"-3"`},
	{"0x_1F", `31`, `"31"`},
	{"+12", `12`, `"12"`},
	{"08", `8`, `"8"`},
	{"1e3", `1000`, `"1000"`},
	{"1.50", `1.5`, `"1.5"`},
	{"0.1234567891", `0.1234567891`, `"0.12345679"`}, // a key is formatted as a float32
	{"1e40", `1e+40`, `".inf"`},
	{".5", `0.5`, `"0.5"`},
	{"18446744073709551615", `18446744073709551615`, ``},
	{".inf", ``, `".inf"`},
	{"+.Inf", ``, `".inf"`},
	{".nan", ``, `".nan"`},
	{"~", `null`, ``},
	{"null", `null`, ``},
	// Strings in both: no sexagesimal, timestamps kept as written.
	{"1:30", `"1:30"`, `"1:30"`},
	{"190:20:30", `"190:20:30"`, `"190:20:30"`},
	{"2001-12-14", `"2001-12-14"`, `"2001-12-14"`},
	{"2001-12-14t21:59:43.10-05:00", `"2001-12-14t21:59:43.10-05:00"`, `"2001-12-14t21:59:43.10-05:00"`},
	{"1__0", `10`, `"10"`},
	{"_1", `"_1"`, `"_1"`},
	{"onion", `"onion"`, `"onion"`},
	{"\"on\"", `"on"`, `"on"`},
	{"!!str yes", `"yes"`, `"yes"`},
	// Not here: `! off`, a string to kubectl, which go-yaml v3 reads as a
	// plain off (tag !!str, no style): the gate takes it for false, a
	// finding where kubectl sends "off" (fail closed).
}

// TestYAML11AsKubectl holds Parse to kubectl's decoder, sigs.k8s.io/yaml,
// on every scalar as a value and as a key (the ConfigMap's data read as
// pin writes it back, and as the gate's tree holds it), and to what
// kubectl was seen decoding: both refuse the same documents.
func TestYAML11AsKubectl(t *testing.T) {
	for _, c := range yaml11Scalars {
		for _, as := range []struct{ name, data, want string }{
			{"value", "v: " + c.scalar, `{"v":` + c.value + `}`},
			{"key", c.scalar + ": v", `{` + c.key + `:"v"}`},
		} {
			t.Run(as.name+" "+c.scalar, func(t *testing.T) {
				if strings.HasSuffix(as.want, ":}") || strings.HasPrefix(as.want, "{:") {
					as.want = "" // kubectl cannot decode it
				}
				in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  " + as.data + "\n"
				j, kerr := sigsyaml.YAMLToJSON([]byte(in))
				objs, err := Parse([]byte(in), "in.yaml")
				if as.want == "" {
					if kerr == nil || err == nil {
						t.Fatalf("kubectl's decoder: %v, Parse: %v; want both to refuse\n%s", kerr, err, in)
					}
					return
				}
				if kerr != nil || err != nil {
					t.Fatalf("kubectl's decoder: %v, Parse: %v\n%s", kerr, err, in)
				}
				var doc map[string]any
				d := json.NewDecoder(bytes.NewReader(j))
				d.UseNumber()
				if err := d.Decode(&doc); err != nil {
					t.Fatal(err)
				}
				data, _ := json.Marshal(doc["data"])
				if string(data) != as.want {
					t.Errorf("kubectl's decoder gives %s, the table says %s", data, as.want)
				}
				// The gate's tree: the type and value its rules read.
				k, v := objs[0].Field("data").Value.YNode().Content[0], objs[0].Field("data").Value.YNode().Content[1]
				for jk, jv := range doc["data"].(map[string]any) {
					if k.Value != jk || !sameType(v, jv) {
						t.Errorf("the gate reads %q: %s %q, kubectl decodes %s", k.Value, v.ShortTag(), v.Value, data)
					}
				}
				var want map[string]any // as plain decodes it
				if err := json.Unmarshal(j, &want); err != nil {
					t.Fatal(err)
				}
				if got := plain(t, objs[0]).(map[string]any)["data"]; !reflect.DeepEqual(got, want["data"]) {
					t.Errorf("written back\n got %v\nwant %v (kubectl's decoder)", got, want["data"])
				}
			})
		}
	}
}

// sameType reports whether a scalar node is read as the JSON value v: its
// tag (the type the gate's schema and rules take) and, for a boolean, its
// value.
func sameType(n *yaml.Node, v any) bool {
	switch v := v.(type) {
	case bool: // as internal/schema reads a !!bool
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		return n.ShortTag() == "!!bool" && err == nil && b == v
	case json.Number:
		return n.ShortTag() == "!!int" || n.ShortTag() == "!!float"
	case string:
		return (n.ShortTag() == "!!str" || n.ShortTag() == "!!timestamp") && n.Value == v
	case nil:
		return n.ShortTag() == "!!null"
	}
	return false
}

// TestYAML12ForKustomize: what kustomize reads (the KRM function's
// ResourceList, a file kustomize read) keeps YAML 1.2: kustomize takes a
// plain on for the string "on", and writes it quoted (`tier: "on"`, seen
// from kustomize build), so what kubectl receives from it is a string.
func TestYAML12ForKustomize(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {tier: on}}\ndata: {yes: n, v: .inf}\n"
	objs, err := ParseAsKustomize([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := yaml.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Normalize(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*yaml.RNode{objs[0], n} {
		tier, _ := o.Pipe(yaml.Lookup("metadata", "labels", "tier"))
		data := o.Field("data").Value.YNode().Content
		if tier.YNode().ShortTag() != "!!str" || tier.YNode().Value != "on" || data[0].Value != "yes" || data[1].ShortTag() != "!!str" {
			t.Errorf("not read as kustomize reads it:\n%s", o.MustString())
		}
	}
}

// TestYAML11Lines: a scalar kubectl reads otherwise keeps its line, so a
// finding on it names the line it is written on; a document kubectl cannot
// decode is refused naming the line.
func TestYAML11Lines(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    tier: on\n"
	objs, err := Parse([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tier, err := objs[0].Pipe(yaml.Lookup("metadata", "labels", "tier"))
	if err != nil || tier == nil {
		t.Fatalf("%v %v", tier, err)
	}
	if n := tier.YNode(); n.Line != 6 || n.ShortTag() != "!!bool" || n.Value != "true" {
		t.Errorf("tier: line %d, %s %q; want line 6, !!bool true", n.Line, n.ShortTag(), n.Value)
	}
	for data, want := range map[string]string{
		"data:\n  a: x\n  ~: v\n":         "line 6: key \"~\" is null",
		"data:\n  a: x\n  b: .inf\n":      "line 6: .inf is not a number",
		"data:\n  on: x\n  \"true\": y\n": `key "true" already defined at line 5`,
	} {
		_, err := Parse([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"+data), "in.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", data, err, want)
		}
	}
}

// FuzzYAML11Scalars holds Parse to kubectl's decoder on plain scalars of
// number-like and word-like characters, as a value and as a key: both
// refuse the document, or the gate reads the type and key kubectl
// decodes.
func FuzzYAML11Scalars(f *testing.F) {
	for _, c := range yaml11Scalars {
		f.Add(c.scalar)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || strings.Trim(s, "0123456789abcdefxoABCDEFXOyesnYESNtrulTRULinfINFNaN.+-_:~ ") != "" ||
			strings.TrimSpace(s) != s || strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
			return
		}
		for _, data := range []string{"v: " + s, s + ": v"} {
			doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  " + data + "\n"
			objs, err := Parse([]byte(doc), "in.yaml")
			j, kerr := sigsyaml.YAMLToJSON([]byte(doc))
			if (err == nil) != (kerr == nil) {
				t.Fatalf("%q: kubectl's decoder: %v, Parse: %v", data, kerr, err)
			}
			if err != nil {
				continue
			}
			var out map[string]any
			d := json.NewDecoder(bytes.NewReader(j))
			d.UseNumber()
			if err := d.Decode(&out); err != nil {
				t.Fatal(err)
			}
			m, ok := out["data"].(map[string]any)
			n := objs[0].Field("data").Value.YNode()
			if !ok || n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Kind != yaml.ScalarNode {
				continue // "- 0: v" is a list
			}
			for jk, jv := range m {
				n := n.Content
				if n[0].Value != jk || n[1].Kind == yaml.ScalarNode && !sameType(n[1], jv) {
					t.Fatalf("%q: the gate reads %q: %s %q, kubectl decodes %s", data, n[0].Value, n[1].ShortTag(), n[1].Value, j)
				}
			}
		}
	})
}

// TestResolveAsKubectl: a tree read otherwise (Helm's output) resolved as
// Parse resolves it; a key made another's is an error.
func TestResolveAsKubectl(t *testing.T) {
	n := yaml.MustParse("metadata:\n  labels: {tier: on, 0x10: x}\ndata: [yes, \"no\"]\n")
	if err := ResolveAsKubectl(n); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(n.MustString()); got != "metadata:\n  labels: {tier: true, \"16\": x}\ndata: [true, \"no\"]" {
		t.Errorf("got\n%s", got)
	}
	err := ResolveAsKubectl(yaml.MustParse("a: x\non: 1\n\"true\": 2\n"))
	if err == nil || !strings.Contains(err.Error(), `key "true" already defined at line 2`) {
		t.Errorf("got %v, want a duplicate key", err)
	}
}
