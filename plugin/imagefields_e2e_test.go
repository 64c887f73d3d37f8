package plugin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// Issue 19, item 2: image fields of custom resources. On the real
// kube-prometheus-stack chart, with every pod image pinned, the gate passed
// while Prometheus and Alertmanager ran by tag through spec.image. The
// stream below is that shape, reduced by hand (synthetic, not vendored).

const promStack = `apiVersion: apps/v1
kind: Deployment
metadata: {name: kps-operator, namespace: monitoring}
spec:
  selector: {matchLabels: {app: kps-operator}}
  template:
    metadata: {labels: {app: kps-operator}}
    spec:
      containers:
      - {name: operator, image: "quay.io/prometheus-operator/prometheus-operator:v0.86.0@` + pinnedDigest + `"}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: kps-prometheus, namespace: monitoring}
spec:
  image: "PROM"
  version: v3.7.3
  replicas: 1
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: spark}
spec:
  type: Scala
  image: "spark:3.5.5@` + pinnedDigest + `"
  executor: {instances: 2, image: "SPARK_EXEC"}
`

// promStackConfig lets the made-up CRDs pass without schemas.
const promStackConfig = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  schema: {ignoreMissing: [monitoring.coreos.com/Prometheus, sparkoperator.k8s.io/SparkApplication, example.com/Engine]}\n"

func TestE2EImageFieldsOfCustomResources(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "gate.yaml")
	write(t, cfg, promStackConfig)
	stream := func(prom, exec string) string {
		return strings.NewReplacer("PROM", prom, "SPARK_EXEC", exec).Replace(promStack)
	}
	// Before: exit 0 — neither field is a container.
	r := gate(t, stream("quay.io/prometheus/prometheus:v3.7.3", "ghcr.io/acme/spark-exec:1"), "check", "-f", "-", "--config", cfg)
	if r.Code != 1 {
		t.Fatalf("tags in spec.image and spec.executor.image: exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"Prometheus/kps-prometheus (ns monitoring)\n  ERROR [image-digest] spec.image",
		`field spec.image: image "quay.io/prometheus/prometheus:v3.7.3" is not pinned by digest`,
		"SparkApplication/pi (ns spark)\n  ERROR [image-digest] spec.executor.image",
	} {
		if !says(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	pinned := stream("quay.io/prometheus/prometheus:v3.7.3@"+pinnedDigest, "ghcr.io/acme/spark-exec:1@"+pinnedDigest)
	if r := gate(t, pinned, "check", "-f", "-", "--config", cfg); r.Code != 0 {
		t.Errorf("every image field pinned: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestE2EImageFieldFlag(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "gate.yaml")
	write(t, cfg, promStackConfig)
	engine := "apiVersion: example.com/v1\nkind: Engine\nmetadata: {name: e}\nspec:\n  runners:\n  - {name: a, imageRef: \"ghcr.io/acme/runner:1\"}\n"
	// Not named image: not read unless named.
	if r := gate(t, engine, "check", "-f", "-", "--config", cfg); r.Code != 0 {
		t.Errorf("unnamed field: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := gate(t, engine, "check", "-f", "-", "--config", cfg, "--image-field", "Engine:spec.runners[].imageRef")
	if r.Code != 1 || !says(r.Stdout, "Engine/e\n  ERROR [image-digest] spec.runners[0].imageRef") {
		t.Errorf("--image-field: exit %d, want 1 naming the field\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = gate(t, engine, "check", "-f", "-", "--config", cfg, "--image-field", "Engine:spec.runners.imageRef")
	if r.Code != 0 || !strings.Contains(r.Stdout, "[image-podspec-path]") || !strings.Contains(r.Stdout, "spec.runners.imageRef") {
		t.Errorf("a field path that matches nothing: exit %d, want 0 with an image-podspec-path warning\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, bad := range []string{"spec.image", "Engine:", "Engine:spec.runners[]"} {
		if r := gate(t, engine, "check", "-f", "-", "--image-field", bad); r.Code != 2 {
			t.Errorf("--image-field %s: exit %d, want 2\n%s", bad, r.Code, r.Stderr)
		}
	}
}

// TestE2EPinImageFields: pin writes the digests back into the image fields:
// into the pinned stream, and, through --write-kustomization, into the
// kustomization's images: when its configurations: tell kustomize's images
// transformer about the field; without that it fails closed, the file
// unchanged.
func TestE2EPinImageFields(t *testing.T) {
	reg := testutil.StartRegistry(t)
	prom := reg.Host + "/prometheus/prometheus:v3.7.3"
	digest := reg.PushImage(t, "prometheus/prometheus:v3.7.3")
	cfg := filepath.Join(t.TempDir(), "gate.yaml")
	write(t, cfg, promStackConfig)
	crs := "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: k8s, namespace: monitoring}\nspec: {image: \"" + prom + "\", version: v3.7.3}\n"

	r := gate(t, crs, "pin", "-f", "-", "--config", cfg, "--insecure-registry", reg.Host)
	if r.Code != 0 || !strings.Contains(r.Stdout, prom+"@"+digest) {
		t.Fatalf("pin -f: exit %d, want the pinned spec.image\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	dir := t.TempDir()
	write(t, filepath.Join(dir, "prometheus.yaml"), crs)
	write(t, filepath.Join(dir, "gate.yaml"), promStackConfig)
	kust := "resources: [prometheus.yaml]\n"
	write(t, filepath.Join(dir, "kustomization.yaml"), kust)
	r = gate(t, "", "pin", "--write-kustomization", dir, "--config", cfg, "--insecure-registry", reg.Host)
	if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); r.Code != 3 || string(got) != kust ||
		!strings.Contains(r.Stderr, reg.Host+"/prometheus/prometheus still render(s) without digest") || !strings.Contains(r.Stderr, "configurations:") {
		t.Errorf("no images fieldSpec for spec/image: exit %d, want 3 with the file unchanged\n%s\n%s", r.Code, got, r.Stderr)
	}

	write(t, filepath.Join(dir, "images-config.yaml"), "images:\n- {kind: Prometheus, path: spec/image}\n")
	write(t, filepath.Join(dir, "kustomization.yaml"), kust+"configurations: [images-config.yaml]\n")
	r = gate(t, "", "pin", "--write-kustomization", dir, "--config", cfg, "--insecure-registry", reg.Host)
	if r.Code != 0 {
		t.Fatalf("with the fieldSpec: exit %d, want 0\n%s", r.Code, r.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); !strings.Contains(string(got), digest) {
		t.Errorf("kustomization.yaml lacks the digest:\n%s", got)
	}
	if r := gate(t, "", "check", "-k", dir, "--config", cfg); r.Code != 0 {
		t.Errorf("check -k after the write: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
