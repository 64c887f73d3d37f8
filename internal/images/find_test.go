package images

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestFindEveryPodSpec(t *testing.T) {
	containers := `containers: [{name: app, image: app:1}]
      initContainers: [{name: init, image: init:1}]
      ephemeralContainers: [{name: debug, image: debug:1}]`
	cases := map[string]struct {
		doc   string
		paths []string
	}{
		"Pod":                   {"kind: Pod\nspec:\n      " + containers, []string{"spec"}},
		"PodTemplate":           {"kind: PodTemplate\ntemplate:\n  spec:\n      " + containers, []string{"template.spec"}},
		"Deployment":            {"kind: Deployment\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"StatefulSet":           {"kind: StatefulSet\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"DaemonSet":             {"kind: DaemonSet\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"ReplicaSet":            {"kind: ReplicaSet\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"ReplicationController": {"kind: ReplicationController\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"Job":                   {"kind: Job\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"Rollout":               {"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"CronJob":               {"kind: CronJob\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          " + strings.ReplaceAll(containers, "\n      ", "\n          "), []string{"spec.jobTemplate.spec.template.spec"}},
		"generic template CRD":  {"apiVersion: example.com/v1\nkind: Worker\nspec:\n  template:\n    spec:\n      " + containers, []string{"spec.template.spec"}},
		"generic jobTemplate":   {"apiVersion: batch.example.com/v1\nkind: Schedule\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          " + strings.ReplaceAll(containers, "\n      ", "\n          "), []string{"spec.jobTemplate.spec.template.spec"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			obj := yaml.MustParse(c.doc)
			got := Find(obj, nil)
			if len(got) != 3 {
				t.Fatalf("found %d images, want 3: %+v", len(got), got)
			}
			want := []string{c.paths[0] + ".initContainers[0].image", c.paths[0] + ".containers[0].image", c.paths[0] + ".ephemeralContainers[0].image"}
			for i, w := range want {
				if got[i].Path != w {
					t.Errorf("path %d = %s, want %s", i, got[i].Path, w)
				}
			}
		})
	}
}

func TestFindIgnoresObjectsWithoutPodSpecs(t *testing.T) {
	for _, doc := range []string{
		"kind: ConfigMap\ndata: {image: nginx:latest}",
		"kind: Service\nspec: {selector: {app: web}}",
		"apiVersion: v1\nkind: Secret\nstringData: {image: nginx:latest}",
	} {
		if got := Find(yaml.MustParse(doc), nil); len(got) != 0 {
			t.Errorf("%q: found %+v", doc, got)
		}
	}
}

func TestFindConfiguredPath(t *testing.T) {
	obj := yaml.MustParse("apiVersion: example.com/v1\nkind: Runner\nspec:\n  pod:\n    containers: [{name: r, image: runner:2}]")
	got := Find(obj, []PodSpecPath{{Kind: "Runner", Path: "spec.pod"}})
	if len(got) != 1 || got[0].Image != "runner:2" || got[0].Path != "spec.pod.containers[0].image" {
		t.Fatalf("got %+v", got)
	}
}

func TestSetImage(t *testing.T) {
	obj := yaml.MustParse("kind: Pod\nspec:\n  containers:\n  - name: a # keep me\n    image: nginx:1\n")
	c := Find(obj, nil)[0]
	if err := c.SetImage("nginx:1@sha256:" + strings.Repeat("a", 64)); err != nil {
		t.Fatal(err)
	}
	s := obj.MustString()
	if !strings.Contains(s, "# keep me") || !strings.Contains(s, "image: nginx:1@sha256:aaaa") {
		t.Errorf("rewritten:\n%s", s)
	}
}

func TestParse(t *testing.T) {
	d := "sha256:" + strings.Repeat("b", 64)
	cases := []struct {
		in                     string
		name, tag, digest, reg string
		valid, ok              bool
	}{
		{"nginx", "nginx", "", "", "index.docker.io", false, true},
		{"nginx:latest", "nginx:latest", "latest", "", "index.docker.io", false, true},
		{"nginx:latest@" + d, "nginx:latest", "latest", d, "index.docker.io", true, true},
		{"ghcr.io/a/b@" + d, "ghcr.io/a/b", "", d, "ghcr.io", true, true},
		{"localhost:5000/a/b:1.2", "localhost:5000/a/b:1.2", "1.2", "", "localhost:5000", false, true},
		{"ghcr.io/a/b@sha256:abc", "ghcr.io/a/b", "", "sha256:abc", "ghcr.io", false, true},
		{"UPPER/case:1", "UPPER/case:1", "1", "", "", false, false},
	}
	for _, c := range cases {
		r, ok := Parse(c.in)
		if ok != c.ok || r.Name != c.name || r.Tag != c.tag || r.Digest != c.digest || (ok && r.Registry != c.reg) || r.ValidDigest() != c.valid {
			t.Errorf("Parse(%q) = %+v ok=%v", c.in, r, ok)
		}
	}
	r, _ := Parse("nginx:1.27")
	if got := r.WithDigest(d, false); got != "nginx:1.27@"+d {
		t.Errorf("WithDigest = %s", got)
	}
	if got := r.WithDigest(d, true); got != "nginx@"+d {
		t.Errorf("WithDigest(dropTag) = %s", got)
	}
}

func TestFindImageFields(t *testing.T) {
	d := "@sha256:" + strings.Repeat("c", 64)
	cases := []struct {
		name, doc string
		extra     []PodSpecPath
		want      []string // path=image of every field found, in order
	}{
		{"Prometheus and its Thanos sidecar (kube-prometheus-stack)", "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nspec:\n  image: quay.io/prometheus/prometheus:v3.5.0\n  version: v3.5.0\n  thanos: {image: quay.io/thanos/thanos:v0.39.2}\n",
			nil, []string{"spec.image=quay.io/prometheus/prometheus:v3.5.0", "spec.thanos.image=quay.io/thanos/thanos:v0.39.2"}},
		{"Alertmanager: a known field is kept even when it is no reference", "apiVersion: monitoring.coreos.com/v1\nkind: Alertmanager\nspec: {image: 'Not An Image'}\n",
			nil, []string{"spec.image=Not An Image"}},
		{"SparkApplication", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nspec:\n  image: spark:3.5.5\n  driver: {cores: 1, image: spark-driver:3.5.5}\n  executor: {instances: 2, image: spark-exec" + d + "}\n",
			nil, []string{"spec.image=spark:3.5.5", "spec.driver.image=spark-driver:3.5.5", "spec.executor.image=spark-exec" + d}},
		{"any CRD, any depth, by name", "apiVersion: example.com/v1\nkind: Thing\nspec:\n  template:\n    spec: {image: nginx}\n  engines:\n  - {name: a, image: 'ghcr.io/acme/engine:1'}\n",
			nil, []string{"spec.template.spec.image=nginx", "spec.engines[0].image=ghcr.io/acme/engine:1"}},
		{"by name: only a string that is a reference", "apiVersion: example.com/v1\nkind: Thing\nspec:\n  a: {image: true}\n  b: {image: 'two words'}\n  c: {image: ''}\n  d: {image: {repository: nginx, tag: '1'}}\n",
			nil, nil},
		{"metadata and status are not read", "apiVersion: example.com/v1\nkind: Thing\nmetadata: {labels: {image: nginx}}\nstatus: {image: nginx:1}\n", nil, nil},
		{"a repository joined with a version (argocd-operator)", "apiVersion: argoproj.io/v1beta1\nkind: ArgoCD\nspec:\n  image: quay.io/argoproj/argocd\n  version: v3.1.0\n  redis: {image: redis, version: '7.2'}\n  sso: {dex: {image: ghcr.io/dexidp/dex:v2.43.0}}\n",
			nil, []string{"spec.sso.dex.image=ghcr.io/dexidp/dex:v2.43.0"}},
		{"Flux image automation scans a repository", "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageRepository\nspec: {image: ghcr.io/stefanprodan/podinfo, interval: 5m}\n", nil, nil},
		{"chart values are the chart's input", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  values:\n    image: nginx:1.27\n    sidecar: {image: busybox}\n", nil, nil},
		{"an Application's valuesObject", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source:\n    helm: {valuesObject: {image: nginx:1.27}}\n", nil, nil},
		{"ConfigMap data", "apiVersion: v1\nkind: ConfigMap\ndata: {image: nginx:1}\n", nil, nil},
		{"image volumes", "kind: Pod\nspec:\n  containers: [{name: a, image: app:1}]\n  volumes:\n  - {name: models, image: {reference: 'ghcr.io/acme/models:v2', pullPolicy: IfNotPresent}}\n  - {name: tmp, emptyDir: {}}\n",
			nil, []string{"spec.containers[0].image=app:1", "spec.volumes[0].image.reference=ghcr.io/acme/models:v2"}},
		{"Argo Workflows container and script are containers, not fields", "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nspec:\n  templates:\n  - name: a\n    container: {image: alpine:3.20}\n  - name: b\n    script: {image: python:3.13, source: print(1)}\n",
			nil, []string{"spec.templates[0].container.image=alpine:3.20", "spec.templates[1].script.image=python:3.13"}},
		{"a configured field under any name", "apiVersion: example.com/v1\nkind: Engine\nspec:\n  runners:\n  - {imageRef: 'ghcr.io/acme/runner:1'}\n  - {imageRef: 'Bad Ref'}\n",
			[]PodSpecPath{{Kind: "Engine", Path: "spec.runners[].imageRef", Field: true}}, []string{"spec.runners[0].imageRef=ghcr.io/acme/runner:1", "spec.runners[1].imageRef=Bad Ref"}},
		{"a configured field named image is found once", "apiVersion: example.com/v1\nkind: Engine\nspec: {image: 'ghcr.io/acme/e:1'}\n",
			[]PodSpecPath{{Kind: "Engine", Path: "spec.image", Field: true}}, []string{"spec.image=ghcr.io/acme/e:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range Find(yaml.MustParse(c.doc), c.extra) {
				got = append(got, f.Path+"="+f.Image)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("found\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

func TestSetImageField(t *testing.T) {
	obj := yaml.MustParse("apiVersion: example.com/v1\nkind: Engine\nspec:\n  runner: {imageRef: 'acme/r:1' } # keep\n  image: acme/e:2\n")
	d := "@sha256:" + strings.Repeat("a", 64)
	for _, c := range Find(obj, []PodSpecPath{{Kind: "Engine", Path: "spec.runner.imageRef", Field: true}}) {
		if err := c.SetImage(c.Image + d); err != nil {
			t.Fatal(err)
		}
		if c.Describe() != "field "+c.Path {
			t.Errorf("Describe() = %q", c.Describe())
		}
	}
	s := obj.MustString()
	if !strings.Contains(s, "imageRef: 'acme/r:1"+d+"'") && !strings.Contains(s, "imageRef: acme/r:1"+d) || !strings.Contains(s, "image: acme/e:2"+d) || !strings.Contains(s, "# keep") {
		t.Errorf("rewritten:\n%s", s)
	}
}

func TestUnmatchedField(t *testing.T) {
	objs := []*yaml.RNode{yaml.MustParse("apiVersion: example.com/v1\nkind: Engine\nspec: {runner: {imageRef: a:1}}\n")}
	extra := []PodSpecPath{{Kind: "Engine", Path: "spec.runner.imageRef", Field: true}, {Kind: "Engine", Path: "spec.runners[].imageRef", Field: true}, {Kind: "Other", Path: "spec.x", Field: true}}
	got := Unmatched(objs, extra)
	if len(got) != 1 || got[0].Path != "spec.runners[].imageRef" {
		t.Fatalf("unmatched = %+v", got)
	}
}

// TestParseCached: the cache gives what Parse gives, keeps at most
// maxParsedRefs references, and parses the others each time.
func TestParseCached(t *testing.T) {
	defer func(n int64) { maxParsedRefs = n }(maxParsedRefs)
	maxParsedRefs = parsedCount.Load() + 2
	for _, image := range []string{"nginx:1.27", "UPPER/x", "nginx:1.27", "a/b:c", "d/e:f", "d/e:f"} {
		want, wok := Parse(image)
		if got, ok := parseCached(image); got != want || ok != wok {
			t.Errorf("parseCached(%q) = %+v, %v; want %+v, %v", image, got, ok, want, wok)
		}
	}
	if n := parsedCount.Load(); n != maxParsedRefs {
		t.Errorf("%d references kept, want %d", n, maxParsedRefs)
	}
	if _, kept := parsedRefs.Load("d/e:f"); kept {
		t.Error("a reference past the cap was kept")
	}
	for _, d := range []struct {
		digest string
		valid  bool
	}{
		{"sha256:" + strings.Repeat("0f", 32), true},
		{"sha256:" + strings.Repeat("0F", 32), false},
		{"sha256:" + strings.Repeat("0f", 31), false},
		{"sha512:" + strings.Repeat("0f", 32), false},
		{"sha256:" + strings.Repeat("0f", 32) + "\n", false},
		{"", false},
	} {
		if got := (Ref{Digest: d.digest}).ValidDigest(); got != d.valid {
			t.Errorf("ValidDigest(%q) = %v, want %v", d.digest, got, d.valid)
		}
	}
}
