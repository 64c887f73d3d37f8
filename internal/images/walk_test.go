package images

import (
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Workloads outside the pod spec paths a gate usually knows: each must have
// every image found, with its path (issue 10: tagged images in Experiments
// and AnalysisTemplate jobs passed unseen).
func TestFindEveryContainerAtAnyDepth(t *testing.T) {
	cases := map[string]struct {
		doc  string
		want []string // path=image
	}{
		"Argo Rollouts Experiment": {`apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: exp}
spec:
  templates:
  - name: baseline
    selector: {matchLabels: {app: a}}
    template:
      metadata: {labels: {app: a}}
      spec:
        containers: [{name: app, image: "argoproj/rollouts-demo:blue"}]
  - name: canary
    template:
      spec:
        initContainers: [{name: init, image: "busybox:1.36"}]
        containers: [{name: app, image: "argoproj/rollouts-demo:yellow"}]
`, []string{
			"spec.templates[0].template.spec.containers[0].image=argoproj/rollouts-demo:blue",
			"spec.templates[1].template.spec.initContainers[0].image=busybox:1.36",
			"spec.templates[1].template.spec.containers[0].image=argoproj/rollouts-demo:yellow",
		}},
		"AnalysisTemplate job metric": {`apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: smoke}
spec:
  metrics:
  - name: smoke
    provider:
      job:
        spec:
          backoffLimit: 1
          template:
            spec:
              restartPolicy: Never
              containers: [{name: t, image: "curlimages/curl:latest", command: [curl]}]
`, []string{"spec.metrics[0].provider.job.spec.template.spec.containers[0].image=curlimages/curl:latest"}},
		"Argo Workflows container, script, containerSet, sidecars": {`apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: wf}
spec:
  templates:
  - name: main
    steps:
    - - {name: a, template: build}
  - name: build
    container: {image: "golang:1.26", command: [go]}
    sidecars: [{name: db, image: "postgres:17"}]
  - name: say
    script: {image: "python:3.13", source: print(1)}
  - name: set
    containerSet:
      containers: [{name: x, image: "alpine:3"}]
`, []string{
			"spec.templates[1].container.image=golang:1.26",
			"spec.templates[1].sidecars[0].image=postgres:17",
			"spec.templates[2].script.image=python:3.13",
			"spec.templates[3].containerSet.containers[0].image=alpine:3",
		}},
		"Tekton Pipeline with an embedded task": {`apiVersion: tekton.dev/v1
kind: Pipeline
metadata: {name: p}
spec:
  tasks:
  - name: build
    taskSpec:
      stepTemplate: {image: "ubuntu:24.04"}
      steps:
      - {name: compile, image: "gcr.io/kaniko-project/executor:latest"}
      - {name: noimage, script: echo}
`, []string{
			"spec.tasks[0].taskSpec.stepTemplate.image=ubuntu:24.04",
			"spec.tasks[0].taskSpec.steps[0].image=gcr.io/kaniko-project/executor:latest",
		}},
		"Knative Service": {`apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: hello}
spec:
  template:
    spec:
      containers: [{image: "ghcr.io/knative/helloworld-go:latest"}]
`, []string{"spec.template.spec.containers[0].image=ghcr.io/knative/helloworld-go:latest"}},
		"KEDA ScaledJob": {`apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {name: q}
spec:
  jobTargetRef:
    template:
      spec:
        containers: [{name: w, image: "worker:2"}]
`, []string{"spec.jobTargetRef.template.spec.containers[0].image=worker:2"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, ct := range Find(yaml.MustParse(c.doc), nil) {
				got = append(got, ct.Path+"="+ct.Image)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("found\n  %q\nwant\n  %q", got, c.want)
			}
		})
	}
}

func TestFindSkipsMetadataStatusAndPolicies(t *testing.T) {
	for name, doc := range map[string]string{
		"status": "apiVersion: v1\nkind: Thing\nstatus:\n  template: {containers: [{image: a:1}]}",
		"kyverno pattern": `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-latest}
spec:
  rules:
  - name: r
    validate:
      pattern:
        spec:
          containers: [{image: "!*:latest"}]
`,
		"CRD schema":    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  versions:\n  - schema: {openAPIV3Schema: {example: {containers: [{image: x:1}]}}}",
		"Rollout steps": "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec:\n  strategy:\n    canary:\n      steps: [{setWeight: 20}, {pause: {}}]",
	} {
		if got := Find(yaml.MustParse(doc), nil); len(got) != 0 {
			t.Errorf("%s: found %+v", name, got)
		}
	}
}

func TestConfiguredListPath(t *testing.T) {
	// A pod spec under a key the walk does not know (here: "pods"), found
	// only through configuration with list syntax.
	obj := yaml.MustParse(`apiVersion: example.com/v1
kind: Batch
metadata: {name: b}
spec:
  groups:
  - pods: {containers: [{name: a, image: "a:1"}]}
  - pods: {containers: [{name: b, image: "b:1"}]}
`)
	cfg := []PodSpecPath{{Kind: "Batch", Path: "spec.groups[].pods"}}
	got := Find(obj, cfg)
	if len(got) != 2 || got[0].Path != "spec.groups[0].pods.containers[0].image" || got[1].Image != "b:1" {
		t.Fatalf("got %+v", got)
	}
	if specs := Resolve(obj, "spec.groups[].pods"); len(specs) != 2 || specs[1].Path != "spec.groups[1].pods" {
		t.Errorf("Resolve = %+v", specs)
	}
	if un := Unmatched([]*yaml.RNode{obj}, cfg); len(un) != 0 {
		t.Errorf("matched path reported unmatched: %+v", un)
	}
	wrong := []PodSpecPath{{Kind: "Batch", Path: "spec.groups.pods"}, {Kind: "Absent", Path: "spec.x"}}
	un := Unmatched([]*yaml.RNode{obj}, wrong)
	if len(un) != 1 || un[0].Path != "spec.groups.pods" {
		t.Errorf("Unmatched = %+v, want the Batch path only (no Absent object in the render)", un)
	}
}

func TestPodSpecs(t *testing.T) {
	obj := yaml.MustParse(`apiVersion: argoproj.io/v1alpha1
kind: Experiment
spec:
  templates:
  - name: a
    template:
      spec:
        serviceAccountName: sa
        containers: [{name: a, image: "a:1"}, {name: b, image: "b:1"}]
        initContainers: [{name: i, image: "i:1"}]
`)
	ps := PodSpecs(obj, nil)
	if len(ps) != 1 || ps[0].Path != "spec.templates[0].template.spec" {
		t.Fatalf("PodSpecs = %+v", ps)
	}
}

// FuzzFind walks arbitrary YAML: it must never panic, and every path it
// reports must lead back to the container's image.
func FuzzFind(f *testing.F) {
	f.Add("kind: Pod\nspec: {containers: [{image: a}]}")
	f.Add("kind: X\nspec: {steps: [[{image: a}], {image: b}]}")
	f.Add("kind: X\nspec: {a: [[[{containers: [{image: z}]}]]]}")
	f.Fuzz(func(t *testing.T, doc string) {
		obj, err := yaml.Parse(doc)
		if err != nil || obj == nil {
			return
		}
		for _, c := range Find(obj, []PodSpecPath{{Kind: yamlpath.String(obj.YNode(), "kind"), Path: "spec.a[].b"}}) {
			if c.Node == nil || c.Image != yamlpath.String(c.Node.YNode(), "image") {
				t.Fatalf("container %+v does not hold its image", c)
			}
		}
		_ = PodSpecs(obj, nil)
		_ = Unmatched([]*yaml.RNode{obj}, []PodSpecPath{{Kind: "X", Path: "spec.a[]"}})
	})
}

// A kro ResourceGraphDefinition's templates name the instance's fields in
// CEL: such an image is not judged there (the instance's is); a literal
// one runs in every instance and is.
func TestFindKroTemplates(t *testing.T) {
	rgd := yaml.MustParse(`apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: web}
spec:
  schema:
    apiVersion: v1alpha1
    kind: Web
    spec:
      image: string | default=nginx
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        template:
          spec:
            initContainers:
            - {name: init, image: "busybox:1.36"}
            containers:
            - {name: web, image: "${schema.spec.image}"}
            - {name: proxy, image: "${schema.spec.registry}/proxy:${schema.spec.tag}"}
`)
	var got []string
	for _, c := range Find(rgd, nil) {
		got = append(got, c.Path+"="+c.Image)
	}
	want := []string{"spec.resources[0].template.spec.template.spec.initContainers[0].image=busybox:1.36"}
	if !slices.Equal(got, want) {
		t.Errorf("RGD: found %q, want %q", got, want)
	}
	// The same expression in any other kind is what the cluster gets.
	dep := yaml.MustParse("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: \"${IMAGE}\"}]\n")
	if got := Find(dep, nil); len(got) != 1 || got[0].Image != "${IMAGE}" {
		t.Errorf("Deployment: found %+v, want its ${IMAGE}", got)
	}
	// The instance's image, which the template's expression reads.
	inst := yaml.MustParse("apiVersion: kro.run/v1alpha1\nkind: Web\nmetadata: {name: shop}\nspec: {image: \"shop:1.2\"}\n")
	if got := Find(inst, nil); len(got) != 1 || got[0].Path != "spec.image" {
		t.Errorf("instance: found %+v, want spec.image", got)
	}
}
