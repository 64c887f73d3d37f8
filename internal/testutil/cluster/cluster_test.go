package cluster_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
)

const rolloutCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rollouts.argoproj.io
spec:
  group: argoproj.io
  scope: Namespaced
  names: {kind: Rollout, listKind: RolloutList, plural: rollouts, singular: rollout, shortNames: [ro]}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const objects = `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
# a comment-only document is skipped
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example/web:1.0"}]
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "registry.example/api:1.0"}]
---
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: shop}
spec:
  containers: [{name: c, image: "registry.example/probe:1.0"}]
`

func TestClusterCRDStatusAndKubectl(t *testing.T) {
	t.Parallel()
	c := cluster.Start(t)

	// The CRD and the first Rollout in one call: Apply must wait for the CRD.
	got := c.Apply(t, rolloutCRD+"---\n"+objects)
	if len(got) != 5 {
		t.Fatalf("Apply returned %d objects, want 5", len(got))
	}
	if ns := got[3].GetNamespace(); ns != "default" {
		t.Errorf("Deployment without namespace went to %q, want default", ns)
	}

	c.SetStatus(t, "argoproj.io/v1alpha1", "Rollout", "shop", "web", `
phase: Paused
message: CanaryPauseStep
readyReplicas: 3
currentStepIndex: 1
conditions:
- {type: Progressing, status: "True", reason: RolloutPaused}
`)
	// Re-applying the spec must keep the status (it lives in a subresource).
	c.Apply(t, strings.Replace(objects, "web:1.0", "web:1.1", 1))

	ro := c.Get(t, "argoproj.io/v1alpha1", "Rollout", "shop", "web")
	wantString(t, ro, "Paused", "status", "phase")
	wantString(t, ro, "CanaryPauseStep", "status", "message")
	if n, _, _ := unstructured.NestedInt64(ro.Object, "status", "readyReplicas"); n != 3 {
		t.Errorf("status.readyReplicas = %d, want 3", n)
	}
	conds, _, _ := unstructured.NestedSlice(ro.Object, "status", "conditions")
	if len(conds) != 1 || conds[0].(map[string]any)["reason"] != "RolloutPaused" {
		t.Errorf("status.conditions = %v, want one RolloutPaused", conds)
	}
	ctrs, _, _ := unstructured.NestedSlice(ro.Object, "spec", "template", "spec", "containers")
	if len(ctrs) != 1 || ctrs[0].(map[string]any)["image"] != "registry.example/web:1.1" {
		t.Errorf("spec containers = %v, want image web:1.1 after re-apply", ctrs)
	}

	// A built-in kind's status subresource works too.
	dep := c.SetStatus(t, "apps/v1", "Deployment", "", "api", `
observedGeneration: 1
replicas: 2
updatedReplicas: 2
readyReplicas: 1
availableReplicas: 1
`)
	if n, _, _ := unstructured.NestedInt64(dep.Object, "status", "readyReplicas"); n != 1 {
		t.Errorf("deployment status.readyReplicas = %d, want 1", n)
	}

	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: skipping the kubectl half")
	}
	out := run(t, kubectl, "--kubeconfig", c.Kubeconfig, "version")
	if !strings.Contains(out, "Server Version: v1.37.2") {
		t.Errorf("kubectl version: want Server Version: v1.37.2, got:\n%s", out)
	}
	out = run(t, kubectl, "--kubeconfig", c.Kubeconfig, "get", "rollouts", "-A")
	if !strings.Contains(out, "shop") || !strings.Contains(out, "web") {
		t.Errorf("kubectl get rollouts -A: want shop/web, got:\n%s", out)
	}
	out = run(t, kubectl, "--kubeconfig", c.Kubeconfig, "config", "current-context")
	if strings.TrimSpace(out) != cluster.ContextName {
		t.Errorf("current context = %q, want %q", out, cluster.ContextName)
	}
}

func TestClusterStop(t *testing.T) {
	t.Parallel()
	c := cluster.Start(t)
	dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig())
	if err != nil {
		t.Fatalf("create discovery client: %v", err)
	}
	if v, err := dc.ServerVersion(); err != nil || v.GitVersion != "v1.37.2" {
		t.Fatalf("server version before Stop = %v, %v; want v1.37.2", v, err)
	}

	c.Stop()
	c.Stop() // idempotent
	began := time.Now()
	if _, err := dc.ServerVersion(); err == nil {
		t.Fatal("server version after Stop succeeded, want an error")
	} else if d := time.Since(began); d > 5*time.Second {
		t.Errorf("request to a stopped cluster took %s, want a fast failure", d)
	} else {
		t.Logf("after Stop: %v", err)
	}
}

func wantString(t *testing.T, obj *unstructured.Unstructured, want string, path ...string) {
	t.Helper()
	if got, _, _ := unstructured.NestedString(obj.Object, path...); got != want {
		t.Errorf("%s = %q, want %q", strings.Join(path, "."), got, want)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
