package apivalidation

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestDecodeInMemoryIsTheJSONDecoders decodes every built-in object of the
// vendored corpus both ways, in memory and through JSON, and wants the
// same object: the in-memory conversion changes the cost, never the input
// to the validation.
func TestDecodeInMemoryIsTheJSONDecoders(t *testing.T) {
	var n int
	testutil.CorpusYAML(t, func(path string, data []byte) {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return // not YAML this test can split: not its subject
			}
			var m map[string]any
			if yaml.Unmarshal(doc, &m) != nil || m == nil {
				continue
			}
			m = integers(m).(map[string]any)
			apiVersion, _ := m["apiVersion"].(string)
			kind, _ := m["kind"].(string)
			if !Handles(apiVersion, kind) {
				continue
			}
			gv, _ := schema.ParseGroupVersion(apiVersion)
			gvk := gv.WithKind(kind)
			fast, err := decode(m, gvk, legacyscheme.Scheme, legacyscheme.Codecs)
			slow, jerr := decodeJSON(m, gvk, legacyscheme.Codecs)
			if (err == nil) != (jerr == nil) || (err != nil && err.Error() != jerr.Error()) {
				t.Errorf("%s: %s %s: in memory %v, through JSON %v", path, apiVersion, kind, err, jerr)
				continue
			}
			if err == nil && !apiequality.Semantic.DeepEqual(fast, slow) {
				t.Errorf("%s: %s %s: the in-memory object differs from the JSON decoder's:\n%#v\n%#v", path, apiVersion, kind, fast, slow)
			}
			n++
		}
	})
	if n < 50 {
		t.Fatalf("compared %d objects; the corpus should give at least 50", n)
	}
	t.Logf("compared %d objects", n)
}

// TestDecodeRefusesAsTheJSONDecoder: numbers the in-memory conversion would
// round or wrap, and values of the wrong type, get the JSON decoder's
// refusal.
func TestDecodeRefusesAsTheJSONDecoder(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"int32 overflow", strings.Replace(deployment, "replicas: 2", "replicas: 3000000000", 1), "cannot unmarshal number 3000000000"},
		{"fraction", strings.Replace(deployment, "replicas: 2", "replicas: 1.5", 1), "cannot unmarshal number 1.5"},
		{"string for a number", strings.Replace(deployment, "replicas: 2", `replicas: "2"`, 1), "cannot unmarshal string"},
		{"quantity", strings.Replace(deployment, "memory: 256Mi", "memory: 1Gb", 1), "quantities must match the regular expression"},
	} {
		t.Run(c.name, func(t *testing.T) {
			verdict, ok := Validate(obj(t, c.doc))
			if !ok || verdict == nil || !strings.Contains(verdict.Decode, c.want) {
				t.Fatalf("got %+v (handled %v), want a decoding error with %q", verdict, ok, c.want)
			}
		})
	}
}

func TestExactNumbers(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{map[string]any{"a": []any{int64(1), "x", true, nil}}, true},
		{map[string]any{"a": int64(math.MaxInt32)}, true},
		{map[string]any{"a": int64(math.MaxInt32) + 1}, false},
		{map[string]any{"a": int64(math.MinInt32) - 1}, false},
		{[]any{map[string]any{"a": 1.0}}, false},
	} {
		if got := exactNumbers(c.v); got != c.want {
			t.Errorf("exactNumbers(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}

// integers turns the whole numbers sigs.k8s.io/yaml decodes as float64
// into int64, the data model package schema hands to Validate.
func integers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = integers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = integers(e)
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
	}
	return v
}
