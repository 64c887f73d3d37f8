package stream

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// mergeCases are merge keys ("<<") as kubectl applies them: sigs.k8s.io/yaml
// over go-yaml v2 (decode.go mapping and merge) sets a mapping's pairs in
// the order they are written, a merge key's pairs where it stands, so a
// merge overwrites the keys written before it and a later merge an earlier
// one; of a list of mappings the first wins. Each case's want is a value
// kubectl's builder (cli-runtime, -f) was seen decoding from it.
var mergeCases = []struct {
	name, data, want string
}{
	{"a merge after a written key overwrites it", "image: pinned\n<<: {image: latest}\n", `"image":"latest"`},
	{"a later merge overwrites an earlier one", "<<: {image: pinned}\n<<: {image: latest}\n", `"image":"latest"`},
	{"a written key after a merge overwrites it", "<<: {image: latest}\nimage: pinned\n", `"image":"pinned"`},
	{"of a list of mappings the first wins, over keys written before", "image: written\nx: written\n<<: [*a, *b]\nz: after\n", `{"image":"first","x":"a","z":"after"}`},
	{"a nested merge is set where it stands in its mapping", "a: \"0\"\n<<: [{a: \"1\"}, {a: \"2\", b: \"2\"}]\nc: \"3\"\n<<: {c: \"4\", <<: {d: \"5\", c: \"6\"}, d: \"7\"}\n", `{"a":"1","b":"2","c":"6","d":"7"}`},
	{"merges through anchors", "<<: *mid\n", `{"image":"latest","name":"base"}`},
	{"empty merges", "<<: *base\nname: mine\n<<: {}\n<<: []\n", `{"image":"latest","name":"mine"}`},
	{"an explicit merge tag", "a: \"0\"\n!!merge <<: {a: \"1\"}\n", `{"a":"1"}`},
	{"an alias of a << scalar is a key named <<", "*k : {a: \"1\"}\n", `{"\u003c\u003c":{"a":"1"}}`},
	{"a quoted << is a key named <<", "\"<<\": {a: \"1\"}\n", `{"\u003c\u003c":{"a":"1"}}`},
	{"an anchored merge value", "<<: &m {a: \"1\"}\nb: *m\n<<: {a: \"2\"}\n", `{"a":"2","b":{"a":"1"}}`},
}

// mergeDoc puts a case's data under a ConfigMap's data, after anchors the
// cases name.
func mergeDoc(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" +
		"anchors:\n- &a {image: first, x: a}\n- &b {image: second, z: b}\n" +
		"- &base {name: base, <<: {image: latest}}\n- &mid {image: pinned, <<: *base}\n- &k <<\n" +
		"data:\n  " + strings.ReplaceAll(strings.TrimSuffix(data, "\n"), "\n", "\n  ") + "\n"
}

// TestMergeKeysAsKubectl holds Parse to kubectl's decoder, sigs.k8s.io/yaml
// (what kubectl's -f reader and Argo CD's call), on every case, and to the
// value kubectl was seen decoding. The data are compared as pin writes
// them back (plain): a key named << stays one.
func TestMergeKeysAsKubectl(t *testing.T) {
	for _, c := range mergeCases {
		t.Run(c.name, func(t *testing.T) {
			in := mergeDoc(c.data)
			objs, err := Parse([]byte(in), "in.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, in)
			}
			j, err := sigsyaml.YAMLToJSON([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			var want any
			if err := json.Unmarshal(j, &want); err != nil {
				t.Fatal(err)
			}
			got := plain(t, objs[0]).(map[string]any)["data"]
			if want := want.(map[string]any)["data"]; !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %v\nwant %v (kubectl's decoder)\n%s", got, want, in)
			}
			data, _ := json.Marshal(got)
			if !strings.Contains(string(data), c.want) {
				t.Errorf("data %s, kubectl decodes %s", data, c.want)
			}
		})
	}
}
