package plugin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// webChart writes a chart whose Deployment runs image (tag, no digest)
// and whose test hook runs a second image, both from the test registry.
func webChart(t *testing.T, dir, image, hookImage string) {
	t.Helper()
	testutil.WriteFiles(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"values.yaml": "image: " + image + "\nhookImage: " + hookImage + "\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}-web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: {{ .Values.image | quote }}}]}
`,
		"templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: {{ .Release.Name }}-migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: {{ .Values.hookImage | quote }}}]
`,
	})
}

// pin on Helm inputs: --chart and -k with helmCharts: (--enable-helm) pin
// every image of the rendered chart against the registry, and what pin
// prints passes check.
func TestE2EPinHelm(t *testing.T) {
	reg := testutil.StartRegistry(t)
	webDigest := reg.PushImage(t, "shop/web:1.5.0")
	jobDigest := reg.PushIndex(t, "shop/migrate:2.0.0")
	web, job := reg.Host+"/shop/web:1.5.0", reg.Host+"/shop/migrate:2.0.0"
	root := t.TempDir()
	chart := filepath.Join(root, "charts", "web")
	webChart(t, chart, web, job)
	write(t, filepath.Join(root, "kustomization.yaml"), "helmGlobals:\n  chartHome: charts\nhelmCharts:\n  - name: web\n    releaseName: shop\n    namespace: shop\n")
	cases := map[string][]string{
		"--chart":          {"--chart", chart, "--release", "shop", "-n", "shop"},
		"-k --enable-helm": {"-k", root, "--enable-helm"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := gate(t, "", append([]string{"pin", "--insecure-registry", reg.Host}, args...)...)
			if r.Code != 0 {
				t.Fatalf("pin: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			for _, want := range []string{web + "@" + webDigest, job + "@" + jobDigest, "name: shop-web", "name: shop-migrate"} {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("pinned render lacks %q:\n%s", want, r.Stdout)
				}
			}
			if c := gate(t, r.Stdout, "check", "-f", "-", "--require-pinned-by"); c.Code != 0 {
				t.Errorf("check of the pinned chart: exit %d\n%s", c.Code, c.Stdout)
			}
		})
	}
	// Without --enable-helm, kustomize refuses helmCharts: no verdict.
	if r := gate(t, "", "pin", "-k", root, "--insecure-registry", reg.Host); r.Code != 3 {
		t.Errorf("pin -k without --enable-helm: exit %d, want 3\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// pin --write-kustomization DIR --enable-helm writes the digests of the
// chart's images into the kustomization's images:, which kustomize's
// images transformer applies to helmCharts: output too (checked with the
// real kustomize CLI, the gate as its helm). A registry failure leaves the
// file byte-identical.
func TestE2EWriteKustomizationHelm(t *testing.T) {
	reg := testutil.StartRegistry(t)
	webDigest := reg.PushImage(t, "shop/web:1.5.0")
	jobDigest := reg.PushImage(t, "shop/migrate:2.0.0")
	web, job := reg.Host+"/shop/web:1.5.0", reg.Host+"/shop/migrate:2.0.0"
	dir := t.TempDir()
	webChart(t, filepath.Join(dir, "charts", "web"), web, job)
	kust := "# the shop, from its chart\nhelmGlobals:\n  chartHome: charts\nhelmCharts:\n  - name: web\n    releaseName: shop\n    namespace: shop\n"
	write(t, filepath.Join(dir, "kustomization.yaml"), kust)
	// Without --enable-helm the render fails: no verdict, file unchanged.
	if r := gate(t, "", "pin", "--write-kustomization", dir, "--insecure-registry", reg.Host); r.Code != 3 || !strings.Contains(r.Stderr, "enable-helm") {
		t.Errorf("--write-kustomization without --enable-helm: exit %d, want 3 naming --enable-helm\n%s", r.Code, r.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); string(got) != kust {
		t.Fatalf("the kustomization changed on failure:\n%s", got)
	}
	if r := gate(t, "", "pin", "--write-kustomization", dir, "--enable-helm", "--insecure-registry", reg.Host); r.Code != 0 {
		t.Fatalf("pin --write-kustomization --enable-helm: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	for _, want := range []string{kust, "- name: " + reg.Host + "/shop/web\n    digest: " + webDigest, "- name: " + reg.Host + "/shop/migrate\n    digest: " + jobDigest} {
		if !strings.Contains(string(got), want) {
			t.Errorf("kustomization after pin lacks %q:\n%s", want, got)
		}
	}
	// The gate renders the written digests and passes the source.
	if r := gate(t, "", "check", "-k", dir, "--enable-helm"); r.Code != 0 {
		t.Errorf("check of the pinned source: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// So does the real kustomize CLI, with the gate as its helm command.
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	link := filepath.Join(t.TempDir(), "helm")
	if err := os.Symlink(testutil.Bin(t, "kubectl-gate"), link); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kustomize, "build", "--enable-helm", "--helm-command", link, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize build --enable-helm: %v\n%s", err, out)
	}
	for _, d := range []string{webDigest, jobDigest} {
		if !strings.Contains(string(out), "@"+d) {
			t.Errorf("kustomize build does not carry the written digest %s:\n%s", d, out)
		}
	}
}

// When kustomize's images: cannot reach an image of the render (here an
// ephemeral container, which its images transformer does not edit), the
// write would pin part of the render: pin undoes it, exits 3 naming the
// repository, and the file is byte-identical.
func TestE2EWriteKustomizationRefusesAPartialPin(t *testing.T) {
	reg := testutil.StartRegistry(t)
	reg.PushImage(t, "shop/web:1.5.0")
	reg.PushImage(t, "shop/debug:1.0")
	dir := t.TempDir()
	chart := filepath.Join(dir, "charts", "web")
	webChart(t, chart, reg.Host+"/shop/web:1.5.0", reg.Host+"/shop/web:1.5.0")
	write(t, filepath.Join(chart, "templates", "pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n  containers: [{name: a, image: \""+reg.Host+"/shop/web:1.5.0\"}]\n  ephemeralContainers: [{name: b, image: \""+reg.Host+"/shop/debug:1.0\"}]\n")
	kust := "helmGlobals:\n  chartHome: charts\nhelmCharts:\n  - name: web\n    releaseName: shop\n"
	write(t, filepath.Join(dir, "kustomization.yaml"), kust)
	r := gate(t, "", "pin", "--write-kustomization", dir, "--enable-helm", "--insecure-registry", reg.Host)
	if r.Code != 3 || !strings.Contains(r.Stderr, reg.Host+"/shop/debug still render(s) without digest after the write") || !strings.Contains(r.Stderr, "the file is unchanged") {
		t.Errorf("exit %d, want 3 naming %s/shop/debug\n%s", r.Code, reg.Host, r.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); string(got) != kust {
		t.Errorf("the kustomization changed:\n%s", got)
	}
	if strings.Contains(r.Stderr, "images +=") {
		t.Errorf("pin reported changes it undid:\n%s", r.Stderr)
	}
}
