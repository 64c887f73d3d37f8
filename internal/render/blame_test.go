package render

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestLineOf(t *testing.T) {
	data := []byte("# image: a:1\nspec:\n  containers:\n  - name: web\n    image: \"a:1\" # pinned later\n  - {name: b, image: b:2}\n- op: replace\n  value: c:3\n")
	for value, want := range map[string]int{"a:1": 5, "b:2": 6, "c:3": 8, "web": 4, "d:4": 0, "a": 0} {
		if got := lineOf(data, value); got != want {
			t.Errorf("lineOf(%q) = %d, want %d", value, got, want)
		}
	}
}

const blameDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000
`

// Blame names the line that writes a value at its field, in a document
// about the object: one image in two containers of a patch, or in several
// objects of a file, gets each its own line, and a value the render does
// not hold at the field blames nothing (it named the first line that held
// the value as text).
func TestBlameFindsTheField(t *testing.T) {
	jobs := ""
	for _, name := range []string{"up", "down"} {
		jobs += fmt.Sprintf("---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: page\n        image: alpine:latest\n", name)
	}
	cases := map[string]struct {
		files            map[string]string
		kind, name, path string
		value            string // "" for the case's image
		want             string // file:line, "" for none
	}{
		"strategic merge, a container added first": {
			files: map[string]string{
				"kustomization.yaml": "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n",
				"deploy.yaml":        blameDeployment,
				"patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n        image: proxy:1.0\n      containers:\n      - name: proxy\n        image: proxy:1.0\n",
			},
			kind: "Deployment", name: "web", path: "spec.template.spec.containers[0].image", want: "patch.yaml:13",
		},
		"strategic merge, the init container": {
			files: map[string]string{
				"kustomization.yaml": "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n",
				"deploy.yaml":        blameDeployment,
				"patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: proxy\n        image: proxy:1.0\n      initContainers:\n      - name: init\n        image: proxy:1.0\n",
			},
			kind: "Deployment", name: "web", path: "spec.template.spec.initContainers[0].image", want: "patch.yaml:13",
		},
		"JSON 6902, an appended list": {
			files: map[string]string{
				"kustomization.yaml": "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n  target: {kind: Deployment, name: web}\n",
				"deploy.yaml":        blameDeployment,
				"patch.yaml":         "- op: add\n  path: /spec/template/spec/containers/1\n  value:\n    name: proxy\n    image: proxy:1.0\n- op: add\n  path: /spec/template/spec/initContainers\n  value:\n  - name: init\n    image: proxy:1.0\n",
			},
			kind: "Deployment", name: "web", path: "spec.template.spec.initContainers[0].image", want: "patch.yaml:10",
		},
		"JSON 6902, one field": {
			files: map[string]string{
				"kustomization.yaml": "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n  target: {kind: Deployment, name: web}\n",
				"deploy.yaml":        blameDeployment,
				"patch.yaml":         "- op: add\n  path: /spec/template/spec/initContainers\n  value: [{name: init, image: \"proxy:1.0\"}]\n- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: proxy:1.0\n",
			},
			kind: "Deployment", name: "web", path: "spec.template.spec.containers[0].image", want: "patch.yaml:6",
		},
		"one image in two objects of a file": {
			files: map[string]string{
				"kustomization.yaml": "resources: [jobs.yaml]\n",
				"jobs.yaml":          jobs,
			},
			kind: "Job", name: "down", path: "spec.template.spec.containers[0].image", want: "jobs.yaml:24",
		},
		"through a name prefix": {
			files: map[string]string{
				"kustomization.yaml": "namePrefix: prod-\nresources: [jobs.yaml]\n",
				"jobs.yaml":          jobs,
			},
			kind: "Job", name: "prod-down", path: "spec.template.spec.containers[0].image", want: "jobs.yaml:24",
		},
		"a value in the map the finding names": {
			files: map[string]string{
				"kustomization.yaml": "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n",
				"deploy.yaml":        blameDeployment,
				"patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        resources:\n          requests: {cpu: \"2\"}\n",
			},
			kind: "Deployment", name: "web", path: "spec.template.spec.containers[0].resources.requests", value: "2", want: "patch.yaml:11",
		},
		"not at the field": {
			files: map[string]string{
				"kustomization.yaml": "resources: [jobs.yaml]\n",
				"jobs.yaml":          jobs,
			},
			kind: "Job", name: "down", path: "spec.template.spec.containers[0].name", want: "",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Chdir(tree(t, c.files))
			res, err := Kustomize(".", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var obj *yaml.RNode
			for _, r := range res.Resources {
				if r.GetKind() == c.kind && r.GetName() == c.name {
					obj = r
				}
			}
			if obj == nil {
				t.Fatalf("no %s/%s in the render", c.kind, c.name)
			}
			value := "alpine:latest"
			if c.kind == "Deployment" {
				value = "proxy:1.0"
			}
			if c.value != "" {
				value = c.value
			}
			got := ""
			if b := Blame(obj, c.path, value); b != nil {
				got = fmt.Sprintf("%s:%d", b.Path, b.Line)
			}
			if got != c.want {
				t.Errorf("Blame(%s) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}
