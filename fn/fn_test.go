package fn_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/fn"
)

// gateList wraps items and a functionConfig spec as kustomize sends them.
func gateList(spec, items string) string {
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: kubectl-gate.dev/v1alpha1\n  kind: Gate\n  metadata: {name: gate}\n  spec:\n" +
		spec + "items:\n" + items
}

const app = `- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata: {name: shop, namespace: argocd}
  spec:
    source: {repoURL: https://github.com/example/shop.git, path: overlays/prod}
    destination: {namespace: shop}
`

var pinnedImage = deploymentItem("web", "ghcr.io/shop/web@sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff")

// TestFunctionHonoursVerdictFields: what the plugin's --fail-on warning and
// --require-pinned-by do, a Gate's spec.failOn and
// spec.images.requirePinnedBy do inside kustomize.
func TestFunctionHonoursVerdictFields(t *testing.T) {
	cases := []struct {
		name, spec, items string
		fails             bool
		says              string
	}{
		{"a warning passes by default", "    images: {podSpecPaths: [{kind: Deployment, path: spec.nope}]}\n", pinnedImage, false, "WARNING [image-podspec-path]"},
		{"failOn: warning fails on it", "    failOn: warning\n    images: {podSpecPaths: [{kind: Deployment, path: spec.nope}]}\n", pinnedImage, true, "WARNING [image-podspec-path]"},
		{"an unrendered source is no verdict", "    {}\n", app, true, "ERROR [argocd-source-not-rendered]"},
		{"an unstamped workload passes by default", "    {}\n", pinnedImage, false, ""},
		{"requirePinnedBy fails it", "    images: {requirePinnedBy: true}\n", pinnedImage, true, "ERROR [image-pinned-by]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := fn.Run(context.Background(), strings.NewReader(gateList(c.spec, c.items)), &out, &errOut, "test")
			if got := errors.Is(err, fn.ErrFindings); got != c.fails || (err != nil && !got) {
				t.Fatalf("err = %v, want fails=%v\nstderr:\n%s", err, c.fails, errOut.String())
			}
			if !strings.Contains(errOut.String(), c.says) {
				t.Errorf("stderr lacks %q:\n%s", c.says, errOut.String())
			}
		})
	}
}

// deploymentItem is one Deployment of a ResourceList's items, in namespace
// shop, with one container running image.
func deploymentItem(name, image string) string {
	return strings.NewReplacer("NAME", name, "IMAGE", image).Replace(`- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: NAME, namespace: shop}
  spec:
    selector: {matchLabels: {app: NAME}}
    template:
      metadata: {labels: {app: NAME}}
      spec:
        containers:
        - {name: NAME, image: "IMAGE"}
`)
}
