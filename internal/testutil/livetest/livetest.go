// Package livetest installs Argo CD applications on a real test API server
// (internal/testutil/cluster) for the tests of `kubectl gate status`: the
// CRDs, the managed objects, their pods and the statuses their controllers
// would write — no controller runs there, so the test writes them through
// the status subresource.
package livetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
)

// Images of the shop app: pinned by digest, as the gate wants them.
const (
	WebImage = "registry.example/web:1.2@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	APIImage = "registry.example/api:2.0@sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	// ArgoNamespace is where Applications live.
	ArgoNamespace = "argocd"
)

// Default statuses, as healthy controllers write them.
const (
	HealthyRollout = `
observedGeneration: "1"
phase: Healthy
replicas: 1
availableReplicas: 1
conditions:
- {type: Available, status: "True", reason: AvailableReason}
- {type: Progressing, status: "True", reason: NewReplicaSetAvailable}`
	ReadyCertificate = `
conditions:
- {type: Ready, status: "True", reason: Ready, message: Certificate is up to date and has not expired}`
)

// App describes one application to install. Its objects go to namespace
// Name; the Application, named Name, to ArgoNamespace.
type App struct {
	Name     string
	Revision string // status.sync.revision
	// RolloutStatus and CertificateStatus default to healthy ones.
	RolloutStatus, CertificateStatus string
	// ExtraPods run these images with label app=web, beside the expected ones.
	ExtraPods []string
	// Empty makes the Application manage no objects.
	Empty bool
	// Server is spec.destination.server; "" means Argo CD's own cluster.
	Server string
	// IgnoreDifferences is the Application's spec.ignoreDifferences, as a
	// YAML flow list.
	IgnoreDifferences string
	// Source is the Application's source, as a line of its spec:
	// "source: {…}" or "sources: […]"; "" means a source of
	// https://git.example/shop.git.
	Source string
}

// InstallCRDs installs the Application, Rollout, Certificate and
// ExternalSecret CRDs and the argocd namespace.
func InstallCRDs(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	crds, err := os.ReadFile(filepath.Join(testutil.Root(t), "internal", "live", "testdata", "crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(t, string(crds))
	c.Apply(t, namespace(ArgoNamespace))
}

// Install creates the app's managed objects, pods and Application, with
// their statuses.
func Install(t testing.TB, c *cluster.Cluster, a App) {
	t.Helper()
	ns := a.Name
	c.Apply(t, namespace(ns)+"---\n"+strings.ReplaceAll(Manifests, "namespace: shop", "namespace: "+ns))
	c.SetStatus(t, "apps/v1", "Deployment", ns, "web", "observedGeneration: 1\nreplicas: 2\nreadyReplicas: 2\navailableReplicas: 2\nconditions:\n- {type: Available, status: \"True\", reason: MinimumReplicasAvailable}\n")
	c.SetStatus(t, "argoproj.io/v1alpha1", "Rollout", ns, "api", or(a.RolloutStatus, HealthyRollout))
	c.SetStatus(t, "cert-manager.io/v1", "Certificate", ns, "tls", or(a.CertificateStatus, ReadyCertificate))
	pods := []struct{ name, app, image string }{{"web-0", "web", WebImage}, {"web-1", "web", WebImage}, {"api-0", "api", APIImage}}
	for i, img := range a.ExtraPods {
		pods = append(pods, struct{ name, app, image string }{fmt.Sprintf("web-extra-%d", i), "web", img})
	}
	for _, p := range pods {
		c.Apply(t, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {app: %s}}\nspec:\n  containers: [{name: main, image: %q}]\n", p.name, ns, p.app, p.image))
		repo, _, _ := strings.Cut(p.image, ":")
		digest := "sha256:" + strings.Repeat("d", 64)
		if _, d, ok := strings.Cut(p.image, "@"); ok {
			digest = d
		}
		c.SetStatus(t, "v1", "Pod", ns, p.name, fmt.Sprintf(`
phase: Running
containerStatuses:
- {name: main, image: %q, imageID: "%s@%s", ready: true, restartCount: 0, state: {running: {startedAt: "2026-12-01T00:00:00Z"}}}
`, p.image, repo, digest))
	}
	InstallApplication(t, c, a)
}

// InstallApplication creates the Application and writes its status: synced
// at a.Revision, managing the objects of Manifests (none when a.Empty).
func InstallApplication(t testing.TB, c *cluster.Cluster, a App) {
	t.Helper()
	ns := a.Name
	resources := fmt.Sprintf(`
- {version: v1, kind: Service, namespace: %[1]s, name: web, status: Synced}
- {group: apps, version: v1, kind: Deployment, namespace: %[1]s, name: web, status: Synced}
- {group: argoproj.io, version: v1alpha1, kind: Rollout, namespace: %[1]s, name: api, status: Synced}
- {group: cert-manager.io, version: v1, kind: Certificate, namespace: %[1]s, name: tls, status: Synced}`, ns)
	if a.Empty {
		resources = " []"
	}
	installApplication(t, c, a, resources, fmt.Sprintf("[%q, %q]", WebImage, APIImage))
}

// installApplication creates the Application with the status.resources and
// status.summary.images given as YAML.
func installApplication(t testing.TB, c *cluster.Cluster, a App, resources, images string) {
	t.Helper()
	c.Apply(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s, namespace: %s}
spec:
  project: default
  %s
  destination: {server: %q, namespace: %s}
  ignoreDifferences: %s
`, a.Name, ArgoNamespace, or(a.Source, `source: {repoURL: "https://git.example/shop.git", path: deploy, targetRevision: main}`),
		or(a.Server, "https://kubernetes.default.svc"), a.Name, or(a.IgnoreDifferences, "[]")))
	c.SetStatus(t, "argoproj.io/v1alpha1", "Application", ArgoNamespace, a.Name, fmt.Sprintf(`
sync: {status: Synced, revision: %q}
health: {status: Healthy}
summary: {images: %s}
resources:%s
`, a.Revision, images, resources))
}

// InstallRender installs an app from a render instead of Manifests: the
// render's objects (local config left out) into namespace a.Name, its
// Deployments available, one running pod per Deployment made from its pod
// template — with the images of runImages (template image → image run) run
// instead — and the Application a (a.Source, a.Revision, a.Server,
// a.IgnoreDifferences; the rest is ignored) managing exactly those objects.
func InstallRender(t testing.TB, c *cluster.Cluster, a App, render []*yaml.RNode, runImages map[string]string) {
	t.Helper()
	ns := a.Name
	var docs, resources, images []string
	for _, obj := range render {
		if manifest.IsLocalConfig(obj) {
			continue
		}
		obj = obj.Copy()
		if err := obj.SetNamespace(ns); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, obj.MustString())
	}
	applied := c.Apply(t, namespace(ns)+"---\n"+strings.Join(docs, "---\n"))
	for _, obj := range applied[1:] {
		gv := obj.GroupVersionKind()
		resources = append(resources, fmt.Sprintf("\n- {group: %q, version: %s, kind: %s, namespace: %s, name: %s, status: Synced}", gv.Group, gv.Version, gv.Kind, ns, obj.GetName()))
		if gv.Kind != "Deployment" {
			continue
		}
		c.SetStatus(t, "apps/v1", "Deployment", ns, obj.GetName(), "observedGeneration: 1\nconditions:\n- {type: Available, status: \"True\", reason: MinimumReplicasAvailable}\n")
		images = append(images, runPod(t, c, obj, runImages)...)
	}
	installApplication(t, c, a, strings.Join(resources, ""), "["+strings.Join(images, ", ")+"]")
}

// runPod creates a running pod from a Deployment's template and returns
// the images it runs, quoted.
func runPod(t testing.TB, c *cluster.Cluster, d *unstructured.Unstructured, runImages map[string]string) []string {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	podLabels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	var images []string
	statuses := map[string]any{}
	for _, list := range []string{"initContainers", "containers"} {
		ctrs, _, _ := unstructured.NestedSlice(spec, list)
		var sts []any
		for _, ctr := range ctrs {
			m := ctr.(map[string]any)
			img, _ := m["image"].(string)
			if run, ok := runImages[img]; ok {
				img = run
			}
			m["image"] = img
			images = append(images, fmt.Sprintf("%q", img))
			repo, _, _ := strings.Cut(img, ":")
			digest := "sha256:" + strings.Repeat("d", 64)
			if _, dg, ok := strings.Cut(img, "@"); ok {
				digest = dg
			}
			sts = append(sts, map[string]any{"name": m["name"], "image": img, "imageID": repo + "@" + digest, "ready": list == "containers", "restartCount": int64(0)})
		}
		if len(ctrs) > 0 {
			_ = unstructured.SetNestedSlice(spec, ctrs, list)
			statuses[map[string]string{"initContainers": "initContainerStatuses", "containers": "containerStatuses"}[list]] = sts
		}
	}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}}
	pod.SetName(d.GetName() + "-0")
	pod.SetNamespace(d.GetNamespace())
	pod.SetLabels(podLabels)
	body, err := pod.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(t, string(body))
	statuses["phase"] = "Running"
	status, err := json.Marshal(statuses)
	if err != nil {
		t.Fatal(err)
	}
	c.SetStatus(t, "v1", "Pod", d.GetNamespace(), pod.GetName(), string(status))
	return images
}

// WriteRender writes Manifests as a kustomization in a new directory and
// returns it: the expected render for -k.
func WriteRender(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [app.yaml]\n",
		"app.yaml":           strings.ReplaceAll(Manifests, "  namespace: shop\n", ""),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func namespace(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
