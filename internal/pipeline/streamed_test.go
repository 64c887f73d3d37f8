package pipeline_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// streamedRender is a large -f render (many chunks) with something for
// the rules to find in every phase of the streamed check, and a Rollout
// read after the Services and the workload it names were released.
func streamedRender(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := benchgen.Write(&b, benchgen.Options{Objects: 1200, Images: 30, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	head := testutil.RolloutTargets + `---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: typo, namespace: shop}
spec: {replica: 3, serviceName: x, selector: {matchLabels: {app: t}}, template: {metadata: {labels: {app: t}}, spec: {containers: [{name: c, image: "ghcr.io/shop/t@sha256:` + strings.Repeat("a", 64) + `"}]}}}
---
`
	tail := testutil.RolloutNamingThem
	return head + b.String() + tail
}

// TestStreamedCheckReportsTheSame: check -f reporting as it reads
// (the streamed check, Options.ReleaseRenders) reports byte for byte what
// check holding the whole render reports, from a file and from stdin: on a
// render it judges streamed, on one it must judge whole once read (a CRD in
// it: the CRD's objects validated, one refused), and on one it must judge
// whole when finishing (a changed copy of an object it released). Each
// finds what it must and only that.
func TestStreamedCheckReportsTheSame(t *testing.T) {
	render := streamedRender(t)
	second := render[strings.Index(render, "kind: StatefulSet\nmetadata:\n  name: app-00001")-len("---\napiVersion: apps/v1\n"):]
	second = second[:strings.Index(second[4:], "---")+4]
	crd := `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: good, namespace: shop}
spec: {size: 3}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: bad, namespace: shop}
spec: {size: large}
`
	for _, c := range []struct {
		name, in string
		want     []string // in the JSON report
		not      []string
	}{
		{"streamed", render,
			[]string{`"rule": "schema"`, `spec.replica`, `"rule": "rollout-service-selector"`, `web-stable`, `"rule": "image-digest"`, `ghcr.io/shop/web:1`, `"errors": 4`},
			[]string{`"rule": "render-duplicate"`, `"rule": "schema-unknown"`, `"errors": 5`}},
		// Annotations written as a list: the API server refuses the
		// object, and the reader's own annotations must not overwrite
		// the list with a map that passes.
		{"annotations a list", render + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: listed\n  namespace: shop\n  annotations: [a, b]\ndata: {a: b}\n",
			[]string{`"rule": "schema"`, `"name": "listed"`, `cannot unmarshal array into Go struct field ObjectMeta.annotations`},
			nil},
		{"whole once read (a CRD)", render + crd,
			[]string{`"rule": "schema"`, `"name": "bad"`, `"rule": "rollout-service-selector"`},
			[]string{`"name": "good"`, `"rule": "schema-unknown"`}},
		{"whole when finishing (a changed copy)", render + strings.Replace(second, "tier: backend", "tier: frontend", 1),
			[]string{`"rule": "render-duplicate"`, `a different copy`, `"rule": "schema"`, `"rule": "rollout-service-selector"`},
			[]string{`an identical copy`}},
		// No verdict, as holding the render gives it: what cannot be read
		// is never judged in part.
		{"a YAML error at the end", render + "---\n[unclosed\n", []string{`"verdict": "no-verdict"`}, []string{`"rule"`}},
	} {
		for _, stdin := range []bool{false, true} {
			name := c.name + map[bool]string{false: ", file", true: ", stdin"}[stdin]
			t.Run(name, func(t *testing.T) {
				in := pipeline.Inputs{}
				if stdin {
					in.Files, in.Stdin = []string{"-"}, strings.NewReader(c.in)
				} else {
					p := filepath.Join(t.TempDir(), "render.yaml")
					if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
						t.Fatal(err)
					}
					in.Files = []string{p}
				}
				whole := runCheck(t, in, "", false)
				if stdin {
					in.Stdin = strings.NewReader(c.in)
				}
				streamed := runCheck(t, in, "", true)
				if whole.reportJSON != streamed.reportJSON || whole.verdicts != streamed.verdicts {
					t.Fatalf("holding the render:\n%s\n%s\nstreamed:\n%s\n%s", whole.verdicts, whole.reportJSON, streamed.verdicts, streamed.reportJSON)
				}
				for _, w := range c.want {
					if !strings.Contains(streamed.reportJSON, w) {
						t.Errorf("report lacks %s:\n%s", w, streamed.reportText)
					}
				}
				for _, n := range c.not {
					if strings.Contains(streamed.reportJSON, n) {
						t.Errorf("report holds %s:\n%s", n, streamed.reportText)
					}
				}
			})
		}
	}
}
