package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

func parse(t testing.TB, docs string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(docs), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parsing: %v", err)
	}
	return nodes
}

func validate(t testing.TB, opts Options, docs string) []Result {
	t.Helper()
	v, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rs, err := v.Validate(context.Background(), parse(t, docs))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return rs
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        ports: [{containerPort: 80}]
        resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: 100m}}
        env: [{name: A, value: "1"}]
`

const certCRDAndCert = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "!has(self.min) || !has(self.max) || self.min <= self.max"
              message: min must not exceed max
            properties:
              size: {type: string, enum: [small, large]}
              min: {type: integer}
              max: {type: integer}
              email: {type: string, format: email}
---
`

func TestRules(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		docs string
		want []string // "rule field" prefixes, in order; empty = passes
	}{
		{"valid deployment", Options{}, deployment, nil},
		{"unknown field", Options{}, strings.Replace(deployment, "replicas: 3", "replica: 3", 1),
			[]string{"schema spec.replica"}},
		{"wrong type", Options{}, strings.Replace(deployment, "replicas: 3", "replicas: three", 1),
			[]string{"schema spec.replicas"}},
		{"missing required", Options{}, strings.Replace(deployment, "- name: web\n        image", "- image", 1),
			[]string{"schema spec.template.spec.containers[0].name"}},
		{"duplicate field", Options{}, strings.Replace(deployment, "replicas: 3", "replicas: 3\n  replicas: 4", 1),
			[]string{"schema spec.replicas"}},
		{"bad base64", Options{}, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: '%%%'}\n",
			[]string{"schema data.k"}},
		{"removed apiVersion", Options{}, strings.Replace(deployment, "apps/v1", "extensions/v1beta1", 1),
			[]string{"api-removed "}},
		{"removed CronJob v1beta1", Options{}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: h}\nspec: {}\n",
			[]string{"api-removed "}},
		{"unknown kind", Options{}, "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\n",
			[]string{"schema-unknown "}},
		{"unknown kind ignored", Options{IgnoreMissing: []string{"networking.istio.io/VirtualService"}},
			"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\n", nil},
		{"unknown core kind", Options{}, "apiVersion: v1\nkind: Potato\nmetadata: {name: p}\n",
			[]string{"schema-unknown "}},
		{"kind newer than target", Options{KubernetesVersion: "1.34"},
			"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {name: p}\nspec: {}\n",
			[]string{"schema-unknown "}},
		{"CRD in render, valid", Options{}, certCRDAndCert + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: small, min: 1, max: 2}\n", nil},
		{"CRD in render, CEL broken", Options{}, certCRDAndCert + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: small, min: 3, max: 2}\n",
			[]string{"schema spec"}},
		{"CRD in render, enum", Options{}, certCRDAndCert + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: huge}\n",
			[]string{"schema spec.size"}},
		{"CRD in render, format", Options{}, certCRDAndCert + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: small, email: not-an-email}\n",
			[]string{"schema spec.email"}},
		{"CRD version not served", Options{}, certCRDAndCert + "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w}\n",
			[]string{"schema "}},
		{"built-in CRD: Certificate without issuerRef", Options{},
			"apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\nspec: {secretName: c-tls, dnsNames: [a.example.com]}\n",
			[]string{"schema spec.issuerRef"}},
		{"built-in CRD: Rollout unknown field", Options{},
			"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  replica: 2\n  selector: {matchLabels: {a: b}}\n  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: a, image: a}]}}\n  strategy: {canary: {steps: [{setWeight: 20}]}}\n",
			[]string{"schema spec.replica"}},
		{"no apiVersion", Options{}, "kind: ConfigMap\nmetadata: {name: x}\n", []string{"schema "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := validate(t, tc.opts, tc.docs)
			var got []string
			for _, r := range rs {
				got = append(got, r.Rule+" "+r.Field)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results, want %d:\n%s", len(rs), len(tc.want), dump(rs))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("result %d = %q, want prefix %q\n%s", i, got[i], tc.want[i], dump(rs))
				}
			}
		})
	}
}

func dump(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + r.String() + "\n")
	}
	return b.String()
}

func TestResultWording(t *testing.T) {
	rs := validate(t, Options{}, strings.Replace(deployment, "imagePullPolicy: IfNotPresent", "imagePullPolicy: 7", 1))
	if len(rs) != 1 {
		t.Fatalf("want 1 result:\n%s", dump(rs))
	}
	r := rs[0]
	if r.Field != "spec.template.spec.containers[0].imagePullPolicy" || r.Value != "integer" ||
		!strings.Contains(r.Reason, "must be of type string") || r.Name != "web" || r.Namespace != "shop" {
		t.Errorf("result = %+v", r)
	}
}

func TestVersions(t *testing.T) {
	vs := Versions()
	if len(vs) < 4 {
		t.Fatalf("embedded versions = %v, want at least 4", vs)
	}
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Version() != vs[len(vs)-1] {
		t.Errorf("default version %s, want newest %s", v.Version(), vs[len(vs)-1])
	}
	if _, err := New(Options{KubernetesVersion: "1.20"}); err == nil {
		t.Error("1.20 accepted; want an error naming the embedded versions")
	}
}

// TestValidateCancelled: a run whose context ends before every object was
// validated is an error (no verdict), never a pass on the objects left.
func TestValidateCancelled(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var objs []*yaml.RNode
	for i := range 50 {
		objs = append(objs, yaml.MustParse(strings.Replace(deployment, "{name: web,", fmt.Sprintf("{name: web%d,", i), 1)))
	}
	if rs, err := v.Validate(context.Background(), objs); err != nil || len(rs) != 0 {
		t.Fatalf("a live context: %v, %d results; want none", err, len(rs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Validate(ctx, objs); !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "validating: ") {
		t.Fatalf("a cancelled context: %v, want validating: context canceled", err)
	}
}

// TestReaderAnnotationsNotValidated: the annotations the gate's reader
// writes on every object (its file and index) are not the object's: the
// API server never receives them. An object whose own annotations are at
// the size limit passes, as it would at the API server, though the reader
// added two more; an annotation key of the object's own that the API
// server refuses is still refused.
func TestReaderAnnotationsNotValidated(t *testing.T) {
	key := "example.com/blob"
	at := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: at-limit\n  annotations:\n    %s: %s\n", key, strings.Repeat("a", 256*1024-len(key)))
	over := strings.Replace(strings.Replace(at, "at-limit", "over-limit", 1), key+":", key+"x:", 1)
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-key\n  annotations: {'not a key!': x}\n"
	objs, err := stream.Parse([]byte(at+"---\n"+over+"---\n"+bad), "a/file/the/reader/names.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p, i := objs[0].GetAnnotations()[kioutil.PathAnnotation], objs[0].GetAnnotations()[kioutil.IndexAnnotation]; p == "" || i == "" {
		t.Fatalf("the reader wrote no path and index annotations: %v", objs[0].GetAnnotations())
	}
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := v.Validate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rs {
		got[r.Name] = append(got[r.Name], r.Field+": "+r.Reason)
	}
	if len(got["at-limit"]) != 0 {
		t.Errorf("annotations at the size limit refused: %v", got["at-limit"])
	}
	if !strings.Contains(strings.Join(got["over-limit"], "\n"), "Too long") {
		t.Errorf("annotations one byte over the limit not refused: %v", got["over-limit"])
	}
	if !strings.Contains(strings.Join(got["bad-key"], "\n"), "not a key!") {
		t.Errorf("an invalid annotation key of the object's own not refused: %v", got["bad-key"])
	}
}

// A CRD that does not serve an object's version: the message says which
// versions it serves and, for a CRD the gate carries (it may be newer
// than the cluster's), how to check against the cluster's release.
func TestUnservedVersionSaysWhatIsServed(t *testing.T) {
	builtin := validate(t, Options{}, "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata: {name: db, namespace: app}\nspec: {}\n")
	if len(builtin) != 1 || builtin[0].Rule != RuleSchema ||
		!strings.Contains(builtin[0].Reason, `in version "external-secrets.io/v1beta1"`) ||
		!strings.Contains(builtin[0].Reason, "it serves v1") || !strings.Contains(builtin[0].Reason, "--crd") {
		t.Errorf("built-in CRD:\n%s", dump(builtin))
	}
	gadget := strings.SplitAfter(lookupCRDs, "---\n")
	var crd string
	for _, d := range gadget {
		if strings.Contains(d, "gadgets.example.com") {
			crd = d
		}
	}
	rendered := validate(t, Options{}, crd+"apiVersion: example.com/v1alpha1\nkind: Gadget\nmetadata: {name: g}\n")
	var got []Result
	for _, r := range rendered {
		if r.Kind == "Gadget" {
			got = append(got, r)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Reason, "the CRD from render does not serve it; it serves v1, v1beta1, v1beta2)") || strings.Contains(got[0].Reason, "--crd") {
		t.Errorf("CRD in the render:\n%s", dump(got))
	}
}
