package schema

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	openapivalidate "k8s.io/kube-openapi/pkg/validation/validate"
)

// TestTrimmedValidatorAgrees checks that validating over trimmed schemas,
// with validators built once and reused, reports exactly what kube-openapi
// reports over the whole schema with fresh validators: for valid and broken
// objects, each validated several times in changing order (a reused
// validator must carry nothing of the previous value but what SetPath
// resets), through combinators and additionalProperties; and that trimming
// and reuse did take place.
func TestTrimmedValidatorAgrees(t *testing.T) {
	var s spec.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","required":["spec"],"properties":{
		"spec":{"type":"object","required":["name","items"],"additionalProperties":false,"properties":{
			"name":{"type":"string","minLength":2},"replicas":{"type":"integer","minimum":0},
			"mode":{"type":"string","enum":["a","b"]},"unused1":{"type":"string"},"unused2":{"type":"boolean"},
			"port":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true},
			"either":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","maximum":3}},
				"oneOf":[{"required":["a"]},{"required":["b"]}]},
			"items":{"type":"array","items":{"type":"object","required":["id"],"properties":{
				"id":{"type":"string"},"port":{"type":"integer","maximum":65535},"x":{"type":"string"},"y":{"type":"string"}}}},
			"labels":{"type":"object","additionalProperties":{"type":"string","maxLength":5}},
			"nested":{"type":"object","additionalProperties":{"type":"object","required":["v"],
				"properties":{"v":{"type":"integer"},"w":{"type":"string","format":"date-time"}}}}}}}}`), &s); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"spec":{"name":"ok","items":[{"id":"a","port":80}]}}`,
		`{"spec":{"name":"x","replicas":-1,"mode":"c","items":[{"port":70000},{"id":3}],"typo":1,"labels":{"k":2}}}`,
		`{"spec":{"items":"no"}}`,
		`{"other":1}`,
		`{"spec":null}`,
		`{"spec":{"name":"ok","items":[],"port":"http","either":{"a":"x"},"labels":{"a":"b","c":"toolong"}}}`,
		`{"spec":{"name":"ok","items":[{"id":"a"},{"id":"b","port":-1,"z":1}],"port":true,"either":{"a":"x","b":9}}}`,
		`{"spec":{"name":"ok","items":[{}],"either":{},"nested":{"p":{"v":1,"w":"2024-01-01T00:00:00Z"},"q":{"w":"yesterday"}}}}`,
	}
	v := newOpenAPIValidator(&s, strfmt.Default)
	for round, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {1, 0, 1, 6, 6, 7, 5, 2}} {
		for _, i := range order {
			var obj any
			if err := json.Unmarshal([]byte(docs[i]), &obj); err != nil {
				t.Fatal(err)
			}
			want := messages(openapivalidate.NewSchemaValidator(&s, nil, "", strfmt.Default).Validate(obj))
			got := messages(v.Validate(obj))
			if !slices.Equal(got, want) {
				t.Errorf("round %d, %s:\n got %q\nwant %q", round, docs[i], got, want)
			}
		}
	}
	n := 0
	v.trimmed.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Error("no schema was trimmed: the test does not exercise trimming")
	}
	direct := 0
	v.shells.Range(func(_, sh any) bool {
		if sh.(*spec.Schema) != nil {
			direct++
		}
		return true
	})
	if direct == 0 {
		t.Error("no node was validated directly: the test does not exercise validateDirect")
	}
	if len(v.idle) != 1 || len(v.idle[0].built) < 5 {
		t.Errorf("validators were not kept for reuse: %d idle sessions", len(v.idle))
	}
}

func messages(r *openapivalidate.Result) []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Error())
	}
	slices.Sort(out)
	return out
}
