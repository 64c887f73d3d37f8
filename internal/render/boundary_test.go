package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// secret is what lies outside the repository: a render that read it would
// copy it into a finding (the replacement below puts it in an image).
const secret = "TOPSECRET_canary"

// outsideBase writes a kustomization outside any repository whose
// ConfigMap holds the secret, and returns its directory.
func outsideBase(t *testing.T) string {
	t.Helper()
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kbase/kustomization.yaml": "resources: [secret.yaml]\n",
		"kbase/secret.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: " + secret + "}\n",
		"charts/evil/Chart.yaml":   "apiVersion: v2\nname: evil\nversion: 0.1.0\n",
		"charts/evil/secret.txt":   secret + "\n",
		"charts/evil/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" +
			"data: {leak: {{ .Files.Get \"secret.txt\" | quote }}}\n",
	})
}

// leaky is an overlay that copies the ConfigMap's token into its
// Deployment's image, as a pull request would to read the token back.
func leaky(resources string) map[string]string {
	return map[string]string{
		"app/kustomization.yaml": "resources: " + resources + "\nreplacements:\n- source: {kind: ConfigMap, name: leaked, fieldPath: data.token}\n" +
			"  targets:\n  - select: {kind: Deployment, name: web}\n    fieldPaths: [spec.template.spec.containers.0.image]\n",
		"app/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n",
	}
}

// rendered is the render's text, or the error's.
func rendered(t *testing.T, res *Result, err error) string {
	t.Helper()
	if err != nil {
		return err.Error()
	}
	s, werr := kio.StringAll(res.Resources)
	if werr != nil {
		t.Fatal(werr)
	}
	return s
}

// Every read of a kustomize render stays in the repository holding the
// kustomization: a directory symlink out of it (kustomize resolves the
// link before it reads the files below, so a check of the files alone
// saw a path outside and let it through), a base named with ../ that
// leaves it, a file:// repository (git would clone it from this machine),
// a helmGlobals.chartHome outside. Each is refused by name and the secret
// is in no message. --load-restrictor LoadRestrictionsNone is the opt-in
// to read a path outside, never through a symlink, never a file://
// repository, never for an --apps-root source.
func TestKustomizeStaysInTheRepository(t *testing.T) {
	out := outsideBase(t)
	kbase := filepath.Join(out, "kbase")
	cases := []struct {
		name  string
		files map[string]string
		link  string // app/sub -> this
		opts  Options
		want  string // "" renders
		as    any
	}{
		{name: "directory symlink out of the repository", files: leaky("[web.yaml, sub]"), link: kbase,
			want: "app/sub is a symlink that leaves", as: &fsbound.EscapeError{}},
		{name: "directory symlink out, LoadRestrictionsNone", files: leaky("[web.yaml, sub]"), link: kbase, opts: Options{LoadRestrictorNone: true},
			want: "app/sub is a symlink that leaves", as: &fsbound.EscapeError{}},
		{name: "base named with ../ out of the repository", files: leaky("[web.yaml, REL]"),
			want: "lies outside", as: &fsbound.OutsideError{}},
		{name: "file:// repository", files: leaky("[web.yaml, 'file://" + kbase + "']"),
			want: "is a file:// repository", as: &FileRemoteError{}},
		{name: "git::file:// repository, LoadRestrictionsNone", files: leaky("[web.yaml, 'git::FILE://" + kbase + "']"), opts: Options{LoadRestrictorNone: true},
			want: "is a file:// repository", as: &FileRemoteError{}},
		{name: "helmGlobals.chartHome outside", files: map[string]string{"app/kustomization.yaml": "helmGlobals: {chartHome: " + filepath.Join(out, "charts") + "}\nhelmCharts:\n- {name: evil, releaseName: x, valuesFile: values.yaml}\n", "app/values.yaml": "{}\n"},
			want: "helmGlobals.chartHome " + filepath.Join(out, "charts"), as: &fsbound.OutsideError{}},
		{name: "HelmChartInflationGenerator chartHome outside", files: map[string]string{"app/kustomization.yaml": "generators: [helm.yaml]\n",
			"app/helm.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata: {name: x}\nname: evil\nchartHome: " + filepath.Join(out, "charts") + "\n"},
			want: "generators: helm.yaml: chartHome", as: &fsbound.OutsideError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repoWith(t, c.files, kbase)
			if c.link != "" {
				must(t, os.Symlink(c.link, filepath.Join(dir, "app", "sub")))
			}
			t.Chdir(dir)
			res, err := Kustomize("app", c.opts)
			got := rendered(t, res, err)
			if err == nil || !strings.Contains(got, c.want) {
				t.Fatalf("got %s, want an error saying %q", got, c.want)
			}
			if !errors.As(err, &c.as) {
				t.Errorf("%T, want %T", err, c.as)
			}
			if strings.Contains(got, secret) {
				t.Errorf("the message holds what lies outside: %s", got)
			}
		})
	}
	// The opt-in: a base named with ../ outside is read as kustomize
	// reads it.
	t.Run("base named with ../, LoadRestrictionsNone", func(t *testing.T) {
		dir := repoWith(t, leaky("[web.yaml, REL]"), kbase)
		t.Chdir(dir)
		res, err := Kustomize("app", Options{LoadRestrictorNone: true})
		if got := rendered(t, res, err); err != nil || !strings.Contains(got, secret) {
			t.Fatalf("got %s, want the base read (the caller's opt-in)", got)
		}
	})
}

// repoWith writes files into a repository, REL in a kustomization
// standing for the path from app to target.
func repoWith(t *testing.T, files map[string]string, target string) string {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(filepath.Join(dir, "app"), target)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	for k, v := range files {
		out[k] = strings.ReplaceAll(v, "REL", filepath.ToSlash(rel))
	}
	return testutil.WriteFiles(t, dir, out)
}

// An Argo CD source under --apps-root is rendered from that checkout
// alone: a base outside it is refused, LoadRestrictionsNone or not.
func TestArgoKustomizeStaysInTheCheckout(t *testing.T) {
	kbase := filepath.Join(outsideBase(t), "kbase")
	dir := repoWith(t, leaky("[web.yaml, REL]"), kbase)
	t.Chdir(dir)
	res, err := RenderArgo(ArgoSource{App: "shop", Dir: "app", Root: "."}, Options{LoadRestrictorNone: true})
	var outside *fsbound.OutsideError
	if got := rendered(t, res, err); !errors.As(err, &outside) || !strings.Contains(got, "--apps-root") || strings.Contains(got, secret) {
		t.Fatalf("got %s, want the base refused as outside the --apps-root checkout", got)
	}
}

// What stays inside the repository renders as before: a base named with
// ../ inside it, a component, a directory symlink inside it, a chart home
// inside it (the kustomization is refused only without --enable-helm).
func TestKustomizeInsideTheRepository(t *testing.T) {
	dir := tree(t, map[string]string{
		"base/kustomization.yaml":   "resources: [cm.yaml]\n",
		"base/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
		"comp/kustomization.yaml":   "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [extra.yaml]\n",
		"comp/extra.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
		"common/kustomization.yaml": "resources: [s.yaml]\n",
		"common/s.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: common}\n",
		"envs/prod/kustomization.yaml": "resources: [../../base, linked]\ncomponents: [../../comp]\nhelmGlobals: {chartHome: ../../charts}\n" +
			"configMapGenerator: [{name: gen, literals: [k=v]}]\n",
	})
	must(t, os.Symlink(filepath.Join("..", "..", "common"), filepath.Join(dir, "envs", "prod", "linked")))
	t.Chdir(dir)
	res, err := Kustomize(filepath.Join("envs", "prod"), Options{})
	got := rendered(t, res, err)
	for _, want := range []string{"name: cfg", "name: extra", "name: common", "name: gen-"} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q:\n%s", want, got)
		}
	}
}
