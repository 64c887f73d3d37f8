package schema

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	openapivalidate "k8s.io/kube-openapi/pkg/validation/validate"
)

// TestTrimmedValidatorAgrees checks that validating over trimmed schemas
// reports exactly what kube-openapi reports over the whole schema, for
// valid and broken objects, and that trimming did take place.
func TestTrimmedValidatorAgrees(t *testing.T) {
	var s spec.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","required":["spec"],"properties":{
		"spec":{"type":"object","required":["name","items"],"additionalProperties":false,"properties":{
			"name":{"type":"string","minLength":2},"replicas":{"type":"integer","minimum":0},
			"mode":{"type":"string","enum":["a","b"]},"unused1":{"type":"string"},"unused2":{"type":"boolean"},
			"items":{"type":"array","items":{"type":"object","required":["id"],"properties":{
				"id":{"type":"string"},"port":{"type":"integer","maximum":65535},"x":{"type":"string"},"y":{"type":"string"}}}},
			"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`), &s); err != nil {
		t.Fatal(err)
	}
	docs := []string{
		`{"spec":{"name":"ok","items":[{"id":"a","port":80}]}}`,
		`{"spec":{"name":"x","replicas":-1,"mode":"c","items":[{"port":70000},{"id":3}],"typo":1,"labels":{"k":2}}}`,
		`{"spec":{"items":"no"}}`,
		`{"other":1}`,
		`{"spec":null}`,
	}
	v := newOpenAPIValidator(&s)
	for _, doc := range docs {
		var obj any
		if err := json.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		want := messages(openapivalidate.NewSchemaValidator(&s, nil, "", strfmt.Default).Validate(obj))
		got := messages(v.Validate(obj))
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", doc, got, want)
		}
	}
	n := 0
	v.trimmed.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Error("no schema was trimmed: the test does not exercise trimming")
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
