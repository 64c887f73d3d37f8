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
		"apiVersion: example.com/v1\nkind: Thing\nspec:\n  template:\n    spec: {image: nginx}",
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
