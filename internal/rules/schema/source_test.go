package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// located runs the schema and api-validation rules and prints each
// finding's field with the file and line it names.
func located(t *testing.T, c *rules.Context) []string {
	t.Helper()
	var out []string
	for _, r := range []rules.Rule{Schema, APIValidation} {
		for _, f := range r.Check(c) {
			where := "(no file)"
			if f.File != nil {
				where = fmt.Sprintf("%s:%d", f.File.Path, f.File.Line)
			}
			out = append(out, fmt.Sprintf("%s %s %s", f.ResourceRef, f.Field.Path, where))
		}
	}
	slices.Sort(out)
	return out
}

// TestFindingsNameFileAndLine: -f objects are placed from the parsed stream
// (the file's own lines), -k objects through kustomize's origin annotation
// (the base file, whatever the overlay renamed), each at the line of the
// field the API server names.
func TestFindingsNameFileAndLine(t *testing.T) {
	const base = "testdata/lines/base/deploy.yaml"
	t.Run("-f", func(t *testing.T) {
		objs, err := render.Files([]string{base}, nil, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"Deployment/web spec.template.metadata.labels " + base + ":25",
			"Deployment/web spec.template.spec.containers[0].imagePullPolicy " + base + ":30",
			"Service/web spec.ports[0].protocl " + base + ":13",
		}
		if got := located(t, &rules.Context{Resources: objs, Config: on()}); !slices.Equal(got, want) {
			t.Errorf("got\n  %q\nwant\n  %q", got, want)
		}
	})
	t.Run("-k", func(t *testing.T) {
		res, err := render.Kustomize("testdata/lines/overlay", render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Injected {
			t.Fatal("the render carries no origin annotations")
		}
		want := []string{
			"Deployment/prod-web (ns shop) spec.template.metadata.labels " + base + ":25",
			// Where the base writes the field; the pipeline's blame then
			// names the overlay's patch that set the value.
			"Deployment/prod-web (ns shop) spec.template.spec.containers[0].imagePullPolicy " + base + ":30",
			"Deployment/prod-web (ns shop) spec.template.spec.containers[0].resources.requests " + base + ":32",
			"Service/prod-web (ns shop) spec.ports[0].protocl " + base + ":13",
		}
		if got := located(t, &rules.Context{Resources: res.Resources, Config: on()}); !slices.Equal(got, want) {
			t.Errorf("got\n  %q\nwant\n  %q", got, want)
		}
	})
}

// TestKustomizeSourceReadAsKustomize: a -k object is placed in the file
// kustomize read, read as kustomize reads it (YAML 1.2): a field named on
// is found on its line, not taken for the key "true" kubectl's YAML 1.1
// would make of it.
func TestKustomizeSourceReadAsKustomize(t *testing.T) {
	const dir = "testdata/yaml11"
	res, err := render.Kustomize(dir, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Deployment/web spec.template.spec.containers[0].on " + dir + "/deploy.yaml:17"}
	if got := located(t, &rules.Context{Resources: res.Resources, Config: on()}); !slices.Equal(got, want) {
		t.Errorf("got\n  %q\nwant\n  %q", got, want)
	}
}

// TestLineOfNearestField: a missing field is placed at the nearest
// enclosing one the file writes; map keys with dots are one segment.
func TestLineOfNearestField(t *testing.T) {
	objs, err := render.Files([]string{"testdata/lines/base/deploy.yaml"}, nil, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := objs[1].YNode()
	for path, want := range map[string]int{
		"":                                        15,
		"spec.template.spec.containers[0].name":   28,
		"spec.template.spec.containers[3].name":   27,
		"spec.template.spec.securityContext":      26,
		"spec.selector.matchLabels[app]":          22,
		"metadata.labels[app.kubernetes.io/name]": 17,
	} {
		if got := yamlpath.LineOf(d, path); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", path, got, want)
		}
	}
}

// TestGenerateNameNamed: a finding about an object named on create (an Argo
// CD hook Job, Argo CD's own sync-waves example) names its generateName,
// not "Job/".
func TestGenerateNameNamed(t *testing.T) {
	objs, err := render.Files([]string{"../../schema/testdata/regressions/argocd-hook-job-generatename.yaml"}, nil, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &rules.Context{Resources: objs, Config: on()}
	if got := append(Schema.Check(c), APIValidation.Check(c)...); len(got) != 0 {
		t.Fatalf("the API server accepts Argo CD's hook Job; got %v", got)
	}
	if _, ok := pullPolicySometimes(objs, nil); !ok {
		t.Fatal("no container to break")
	}
	got := APIValidation.Check(&rules.Context{Resources: objs, Config: on()})
	if len(got) != 1 {
		t.Fatalf("want one finding, got %v", got)
	}
	if s := got[0].ResourceRef.String(); s != "Job generateName: app-slack-notification-" {
		t.Errorf("the finding names the object %q", s)
	}
	if r := manifest.Ref(objs[0]); r.String() != "Job generateName: app-slack-notification-" {
		t.Errorf("manifest.Ref names it %q", r)
	}
}

// TestForgedOriginReadsNothingOutside: an -f file is content a pull
// request controls, and so is an origin annotation in it: the source it
// names is read for a line only inside the file's repository (the file
// outside, holding the same object, was read and its line reported).
func TestForgedOriginReadsNothingOutside(t *testing.T) {
	outside := t.TempDir()
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	const svc = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n\n\n\n    protocl: TCP\n"
	for _, dir := range []string{outside, repo} {
		if err := os.WriteFile(filepath.Join(dir, "source.yaml"), []byte(svc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		origin string
		line   int
	}{
		"outside":            {filepath.Join(outside, "source.yaml"), 0},
		"inside":             {filepath.Join(repo, "source.yaml"), 11},
		"inside, relatively": {"source.yaml", 11},
		"escaping":           {"../" + filepath.Base(outside) + "/source.yaml", 0},
	} {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(repo, "in.yaml")
			doc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    config.kubernetes.io/origin: |\n      path: " + tc.origin + "\nspec:\n  ports:\n  - port: 80\n    protocl: TCP\n"
			if err := os.WriteFile(in, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(repo)
			objs, err := render.Files([]string{"in.yaml"}, nil, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := located(t, &rules.Context{Resources: objs, Config: on()})
			want := fmt.Sprintf("Service/s spec.ports[0].protocl %s:%d", tc.origin, tc.line)
			if len(got) != 1 || got[0] != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
