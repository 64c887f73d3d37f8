package images_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	imagerules "github.com/kubectl-gate/kubectl-gate/internal/rules/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// runRuleOn runs one rule on a YAML stream with a config, as the engine does.
func runRuleOn(t *testing.T, id, stream string, cfg *config.Spec, mod func(*rules.Context)) []finding.Finding {
	t.Helper()
	r, ok := all.Lookup(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	return ruletest.Check(t, r, ruletest.Case{Input: stream, Config: cfg, Setup: mod})
}

const digestA = "sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"

func deployment(images ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\nspec:\n  template:\n    spec:\n      containers:\n")
	for i, img := range images {
		b.WriteString("      - {name: c" + string(rune('0'+i)) + ", image: \"" + img + "\"}\n")
	}
	return b.String()
}

func TestImageDigest(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		fires  int
		says   string
	}{
		{"latest", deployment("nginx:latest"), 1, "not pinned by digest (tag latest)"},
		{"no tag", deployment("nginx"), 1, "no tag (implicit latest)"},
		{"semver tag", deployment("ghcr.io/shop/web:1.4.2"), 1, "tag 1.4.2"},
		{"malformed digest", deployment("ghcr.io/shop/web@sha256:abc"), 1, "malformed digest"},
		{"invalid reference", deployment("UPPER/Case:1"), 1, "not a valid image reference"},
		{"digest only", deployment("ghcr.io/shop/web@" + digestA), 0, ""},
		{"latest with digest passes: the digest is the content", deployment("nginx:latest@" + digestA), 0, ""},
		{"init and main containers", strings.Replace(deployment("a:1", "b@"+digestA), "containers:", "initContainers: [{name: i, image: init:2}]\n      containers:", 1), 2, ""},
		{"local config is not applied", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: tmpl\n  annotations: {config.kubernetes.io/local-config: \"true\"}\nspec:\n  containers: [{name: a, image: nginx}]\n", 0, ""},
		{"CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: a, image: busybox:1.36}]\n", 1, "busybox:1.36"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runRuleOn(t, "image-digest", c.stream, nil, nil)
			if len(got) != c.fires {
				t.Fatalf("%d findings, want %d: %+v", len(got), c.fires, got)
			}
			if c.says != "" && !strings.Contains(got[0].Message, c.says) {
				t.Errorf("message %q lacks %q", got[0].Message, c.says)
			}
		})
	}
}

func TestImageDigestOffAndNamesTheOverlay(t *testing.T) {
	cfg := config.Default()
	cfg.Images.Digest = config.DigestOff
	if got := runRuleOn(t, "image-digest", deployment("nginx:latest"), cfg, nil); len(got) != 0 {
		t.Errorf("digest: off still fired: %+v", got)
	}
	stream := strings.Replace(deployment("nginx:latest"), "namespace: prod}", `namespace: prod, annotations: {
    config.kubernetes.io/origin: "path: base/web.yaml\n",
    internal.kubectl-gate.dev/image-sources: "{\"nginx\": {\"file\": \"overlays/prod/kustomization.yaml\", \"line\": 9}}"}}`, 1)
	got := runRuleOn(t, "image-digest", stream, nil, nil)
	if len(got) != 1 || got[0].File == nil || *got[0].File != (finding.File{Path: "overlays/prod/kustomization.yaml", Line: 9}) ||
		!strings.Contains(got[0].Message, "image set by overlays/prod/kustomization.yaml `images:`") {
		t.Fatalf("finding does not name the overlay's entry: %+v", got)
	}
	// an Application's spec.source.kustomize.images entry, which Argo CD
	// writes into the kustomization it builds
	stream = strings.Replace(deployment("nginx:latest"), "namespace: prod}", `namespace: prod, annotations: {
    internal.kubectl-gate.dev/image-sources: "{\"nginx\": {\"file\": \"apps/web.yaml\", \"line\": 17, \"by\": \"Application web spec.source.kustomize.images[0] in apps/web.yaml\"}}"}}`, 1)
	got = runRuleOn(t, "image-digest", stream, nil, nil)
	if len(got) != 1 || got[0].File == nil || *got[0].File != (finding.File{Path: "apps/web.yaml", Line: 17}) ||
		!strings.Contains(got[0].Message, "(image set by Application web spec.source.kustomize.images[0] in apps/web.yaml)") {
		t.Fatalf("finding does not name the Application's entry: %+v", got[0])
	}
}

func TestImageRegistry(t *testing.T) {
	cfg := config.Default()
	cfg.Images.AllowedRegistries = []string{"ghcr.io", "docker.io"}
	stream := deployment("ghcr.io/shop/web@"+digestA, "nginx@"+digestA, "quay.io/evil/miner@"+digestA)
	got := runRuleOn(t, "image-registry", stream, cfg, nil)
	if len(got) != 1 || !strings.Contains(got[0].Message, "quay.io") {
		t.Fatalf("want one finding on quay.io, got %+v", got)
	}
	if got := runRuleOn(t, "image-registry", stream, nil, nil); len(got) != 0 {
		t.Errorf("no allow-list must mean any registry: %+v", got)
	}
}

func TestImageResolveAndStale(t *testing.T) {
	other := "sha256:" + strings.Repeat("c", 64)
	cfg := config.Default()
	cfg.Images.Digest = config.DigestVerify
	img := "ghcr.io/shop/web:1.4.2@" + digestA
	gone := "ghcr.io/shop/gone@" + other
	res := map[string]images.Resolution{
		img:                      {Digest: digestA},
		"ghcr.io/shop/web:1.4.2": {Digest: other},
		gone:                     {Err: errors.New("MANIFEST_UNKNOWN")},
	}
	with := func(c *rules.Context) { c.Resolutions = res }
	resolve := runRuleOn(t, "image-resolve", deployment(img, gone), cfg, with)
	if len(resolve) != 1 || !resolve[0].NoVerdict || !strings.Contains(resolve[0].Message, "MANIFEST_UNKNOWN") {
		t.Fatalf("image-resolve: %+v", resolve)
	}
	stale := runRuleOn(t, "image-digest-stale", deployment(img, gone), cfg, with)
	if len(stale) != 1 || stale[0].Severity != finding.SeverityWarning || stale[0].Field.ProposedValue != "ghcr.io/shop/web:1.4.2@"+other {
		t.Fatalf("image-digest-stale: %+v", stale)
	}
	res["ghcr.io/shop/web:1.4.2"] = images.Resolution{Digest: digestA}
	if stale := runRuleOn(t, "image-digest-stale", deployment(img), cfg, with); len(stale) != 0 {
		t.Errorf("tag still points at the pin, yet stale fired: %+v", stale)
	}
	if got := runRuleOn(t, "image-resolve", deployment(img), cfg, with); len(got) != 0 {
		t.Errorf("resolved image reported: %+v", got)
	}
	if got := runRuleOn(t, "image-resolve", deployment("ghcr.io/shop/never-asked@"+other), cfg, with); len(got) != 1 {
		t.Errorf("an image the resolver did not answer must fail closed: %+v", got)
	}
}

func TestImagePinnedBy(t *testing.T) {
	on := config.Default()
	on.Images.RequirePinnedBy = true
	if got := runRuleOn(t, "image-pinned-by", deployment("a@"+digestA), on, nil); len(got) != 1 {
		t.Errorf("unstamped workload passed: %+v", got)
	}
	stamped := strings.Replace(deployment("a@"+digestA), "namespace: prod}", "namespace: prod, annotations: {kubectl-gate.dev/pinned: v1}}", 1)
	if got := runRuleOn(t, "image-pinned-by", stamped, on, nil); len(got) != 0 {
		t.Errorf("stamped workload failed: %+v", got)
	}
	if got := runRuleOn(t, "image-pinned-by", deployment("a@"+digestA), nil, nil); len(got) != 0 {
		t.Errorf("rule fired without requirePinnedBy: %+v", got)
	}
}

// TestImageMutants: each image rule's selftest mutants turn a passing
// render red.
func TestImageMutants(t *testing.T) {
	img := "ghcr.io/shop/web:1.4.2@" + digestA
	ruletest.Mutants(t, imagerules.Digest, ruletest.Case{Input: deployment(img)})

	verify := config.Default()
	verify.Images.Digest = config.DigestVerify
	answered := func(c *rules.Context) {
		c.Resolutions = map[string]images.Resolution{img: {Digest: digestA}, "ghcr.io/shop/web:1.4.2": {Digest: digestA}}
	}
	ruletest.Mutants(t, imagerules.Resolve, ruletest.Case{Input: deployment(img), Config: verify, Setup: answered})

	pinned := config.Default()
	pinned.Images.RequirePinnedBy = true
	stamped := strings.Replace(deployment(img), "namespace: prod}", "namespace: prod, annotations: {kubectl-gate.dev/pinned: v1}}", 1)
	ruletest.Mutants(t, imagerules.PinnedBy, ruletest.Case{Input: stamped, Config: pinned})

	allowed := config.Default()
	allowed.Images.AllowedRegistries = []string{"ghcr.io"}
	ruletest.Mutants(t, imagerules.Registry, ruletest.Case{Input: deployment(img), Config: allowed})
}

func TestImagePodSpecPath(t *testing.T) {
	batch := "apiVersion: example.com/v1\nkind: Batch\nmetadata: {name: b}\nspec:\n  groups:\n  - pods: {containers: [{name: a, image: \"a:1\"}]}\n"
	cfg := func(path string) *config.Spec {
		s := config.Default()
		s.Images.PodSpecPaths = []config.PodSpecPath{{Kind: "Batch", Path: path}}
		return s
	}
	got := runRuleOn(t, "image-podspec-path", batch, cfg("spec.groups.pods"), nil)
	if len(got) != 1 || !strings.Contains(got[0].Message, "spec.groups.pods") {
		t.Errorf("a path written without [] = %+v, want one warning naming it", got)
	}
	if got := runRuleOn(t, "image-podspec-path", batch, cfg("spec.groups[].pods"), nil); len(got) != 0 {
		t.Errorf("a matching list path = %+v", got)
	}
	if got := runRuleOn(t, "image-podspec-path", deployment("a:1"), cfg("spec.x"), nil); len(got) != 0 {
		t.Errorf("no Batch in the render = %+v", got)
	}
	// The walk finds the nested containers without configuration: the tag
	// fires image-digest.
	if got := runRuleOn(t, "image-digest", batch, nil, nil); len(got) != 1 || got[0].Field.Path != "spec.groups[0].pods.containers[0].image" {
		t.Errorf("image-digest on a nested pod spec = %+v", got)
	}
}

// kubePrometheus is the shape of kube-prometheus-stack's render: every pod
// image pinned, Prometheus and Alertmanager run by tag through spec.image.
const kubePrometheus = `apiVersion: apps/v1
kind: Deployment
metadata: {name: kps-operator, namespace: monitoring}
spec:
  template:
    spec:
      containers:
      - {name: operator, image: "quay.io/prometheus-operator/prometheus-operator:v0.86.0@` + digestA + `"}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: kps-prometheus, namespace: monitoring}
spec:
  image: "quay.io/prometheus/prometheus:v3.7.3"
  version: v3.7.3
  replicas: 1
---
apiVersion: monitoring.coreos.com/v1
kind: Alertmanager
metadata: {name: kps-alertmanager, namespace: monitoring}
spec:
  image: "quay.io/prometheus/alertmanager:v0.28.1@` + digestA + `"
  version: v0.28.1
`

func TestImageFields(t *testing.T) {
	got := runRuleOn(t, "image-digest", kubePrometheus, nil, nil)
	if len(got) != 1 || got[0].Field.Path != "spec.image" || got[0].ResourceRef.Kind != "Prometheus" || !strings.Contains(got[0].Message, "field spec.image: image \"quay.io/prometheus/prometheus:v3.7.3\" is not pinned") {
		t.Fatalf("image-digest on kube-prometheus-stack = %+v, want one on Prometheus spec.image", got)
	}
	pinned := strings.Replace(kubePrometheus, "prometheus:v3.7.3\"", "prometheus:v3.7.3@"+digestA+"\"", 1)
	if got := runRuleOn(t, "image-digest", pinned, nil, nil); len(got) != 0 {
		t.Errorf("every image pinned = %+v", got)
	}
	allowed := config.Default()
	allowed.Images.AllowedRegistries = []string{"ghcr.io"}
	if got := runRuleOn(t, "image-registry", pinned, allowed, nil); len(got) != 3 {
		t.Errorf("image-registry = %d findings, want 3 (operator, Prometheus, Alertmanager)", len(got))
	}
	// A configured field under another name.
	engine := "apiVersion: example.com/v1\nkind: Engine\nmetadata: {name: e}\nspec: {runner: {imageRef: 'ghcr.io/acme/runner:1'}}\n"
	cfg := func(path string) *config.Spec {
		s := config.Default()
		s.Images.Fields = []config.ImageField{{Kind: "Engine", Path: path}}
		return s
	}
	if got := runRuleOn(t, "image-digest", engine, nil, nil); len(got) != 0 {
		t.Errorf("imageRef unconfigured = %+v", got)
	}
	if got := runRuleOn(t, "image-digest", engine, cfg("spec.runner.imageRef"), nil); len(got) != 1 || got[0].Field.Path != "spec.runner.imageRef" {
		t.Errorf("imageRef configured = %+v", got)
	}
	got = runRuleOn(t, "image-podspec-path", engine, cfg("spec.runners.imageRef"), nil)
	if len(got) != 1 || got[0].Field.Path != "spec.images.fields" || !strings.Contains(got[0].Message, "spec.runners.imageRef") {
		t.Errorf("a field path that matches nothing = %+v, want one warning naming it", got)
	}
	if got := runRuleOn(t, "image-podspec-path", engine, cfg("spec.runner.imageRef"), nil); len(got) != 0 {
		t.Errorf("a matching field path = %+v", got)
	}
}
