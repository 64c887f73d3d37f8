package gate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// mapResolver answers from a table; a reference it lacks gets no answer.
// The engine is tested with it; internal/resolve and the end-to-end tests
// use the real in-process registry.
type mapResolver map[string]images.Resolution

func (m mapResolver) Resolve(_ context.Context, refs []string) map[string]images.Resolution {
	out := map[string]images.Resolution{}
	for _, r := range refs {
		if a, ok := m[r]; ok {
			out[r] = a
		}
	}
	return out
}

const stream = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - {name: web, image: "ghcr.io/shop/web:1.4"}
      - {name: proxy, image: "envoy:v1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  template:
    spec:
      containers:
      - {name: w, image: "ghcr.io/shop/web:1.4"}
`

var d = "sha256:" + strings.Repeat("d", 64)

func TestPin(t *testing.T) {
	nodes, err := render.Parse([]byte(stream), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := mapResolver{"ghcr.io/shop/web:1.4": {Digest: d}, "envoy:v1": {Err: errors.New("MANIFEST_UNKNOWN")}}
	rep, err := gate.Run(context.Background(), nodes, gate.Options{Pin: true}, gate.Deps{Resolver: res, Version: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	out := nodes[0].MustString() + nodes[1].MustString()
	if strings.Count(out, "ghcr.io/shop/web:1.4@"+d) != 2 || !strings.Contains(out, `image: "envoy:v1"`) {
		t.Errorf("pinned render:\n%s", out)
	}
	// web could not pin envoy: no stamp; worker is fully pinned: stamped.
	if nodes[0].GetAnnotations()[manifest.AnnoPinned] != "" || nodes[1].GetAnnotations()[manifest.AnnoPinned] != "v9" {
		t.Errorf("stamps: web %q, worker %q", nodes[0].GetAnnotations()[manifest.AnnoPinned], nodes[1].GetAnnotations()[manifest.AnnoPinned])
	}
	if !rep.NoVerdict() || rep.Verdict(false) != finding.VerdictNoVerdict {
		t.Fatalf("an image that could not be pinned must be no verdict: %+v", rep.Findings)
	}
	for _, f := range rep.Findings {
		if f.Rule == "image-digest" {
			t.Errorf("image-digest reported what image-resolve explains: %+v", f)
		}
	}
}

func TestPinDropTagAndVerify(t *testing.T) {
	nodes, _ := render.Parse([]byte(stream), "s.yaml")
	res := mapResolver{"ghcr.io/shop/web:1.4": {Digest: d}, "envoy:v1": {Digest: d}}
	if _, err := gate.Run(context.Background(), nodes, gate.Options{Pin: true, DropTag: true}, gate.Deps{Resolver: res}); err != nil {
		t.Fatal(err)
	}
	if out := nodes[0].MustString(); !strings.Contains(out, "ghcr.io/shop/web@"+d) || !strings.Contains(out, "envoy@"+d) {
		t.Errorf("--drop-tag:\n%s", out)
	}
	cfg := config.Default()
	cfg.Images.Digest = config.DigestVerify
	if _, err := gate.Run(context.Background(), nodes, gate.Options{Config: cfg}, gate.Deps{}); !errors.Is(err, gate.ErrNoResolver) {
		t.Errorf("verify without a resolver: err = %v", err)
	}
	rep, err := gate.Run(context.Background(), nodes, gate.Options{Config: cfg}, gate.Deps{Resolver: mapResolver{"ghcr.io/shop/web@" + d: {Digest: d}}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.NoVerdict() {
		t.Errorf("verify: an unanswered digest passed: %+v", rep.Findings)
	}
}

// TestPinImageFields: pin writes back the image fields of custom resources
// exactly as it does containers' (Prometheus spec.image, a SparkApplication's
// executor), and check then passes the pinned render.
func TestPinImageFields(t *testing.T) {
	const crs = `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s, namespace: monitoring}
spec: {image: "quay.io/prometheus/prometheus:v3.7.3", version: v3.7.3}
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  image: "spark:3.5.5"
  executor: {instances: 2, image: "ghcr.io/acme/spark-exec:1"}
`
	nodes, err := render.Parse([]byte(crs), "crs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := mapResolver{"quay.io/prometheus/prometheus:v3.7.3": {Digest: d}, "spark:3.5.5": {Digest: d}, "ghcr.io/acme/spark-exec:1": {Digest: d}}
	rep, err := gate.Run(context.Background(), nodes, gate.Options{Pin: true}, gate.Deps{Resolver: res, Version: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	out := nodes[0].MustString() + nodes[1].MustString()
	for _, want := range []string{"quay.io/prometheus/prometheus:v3.7.3@" + d, "spark:3.5.5@" + d, "ghcr.io/acme/spark-exec:1@" + d} {
		if !strings.Contains(out, want) {
			t.Errorf("pinned render lacks %s:\n%s", want, out)
		}
	}
	// (schema-unknown fires too: the test gives no CRDs.)
	if f := imageFindings(rep); len(f) != 0 || nodes[0].GetAnnotations()[manifest.AnnoPinned] != "v9" {
		t.Errorf("pin: findings %+v, stamp %q", f, nodes[0].GetAnnotations()[manifest.AnnoPinned])
	}
	before, _ := render.Parse([]byte(crs), "crs.yaml")
	if rep, err := gate.Run(context.Background(), before, gate.Options{}, gate.Deps{}); err != nil || len(imageFindings(rep)) != 3 {
		t.Errorf("check before pinning: %v, image findings %+v, want 3", err, imageFindings(rep))
	}
	if again, err := gate.Run(context.Background(), nodes, gate.Options{}, gate.Deps{}); err != nil || len(imageFindings(again)) != 0 {
		t.Errorf("check of the pinned render: %v %+v", err, imageFindings(again))
	}
}

func imageFindings(rep *finding.Report) []finding.Finding {
	var out []finding.Finding
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Rule, "image-") {
			out = append(out, f)
		}
	}
	return out
}
