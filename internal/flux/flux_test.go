package flux

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// fleet is a Flux repository laid out as `flux bootstrap` leaves it: a
// cluster directory with the flux-system sync objects and the
// Kustomizations of the apps, the apps as kustomize bases and overlays.
var fleet = map[string]string{
	"clusters/prod/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 1m
  url: ssh://git@github.com/example/fleet
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 10m
  path: ./clusters/prod
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
	"clusters/prod/cluster-vars.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-vars, namespace: flux-system}
data: {CLUSTER_NAME: prod-eu, REPLICAS: "3"}
`,
	"clusters/prod/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/prod
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: shop
  namePrefix: prod-
  images:
  - {name: ghcr.io/example/web, newTag: "1.4.2"}
  patches:
  - patch: |
      - op: add
        path: /metadata/labels/tier
        value: frontend
    target: {kind: Deployment, name: web}
  components: [../../components/monitoring]
  postBuild:
    substitute: {REGION: eu-west-1}
    substituteFrom:
    - {kind: ConfigMap, name: cluster-vars}
`,
	"apps/base/kustomization.yaml": "resources: [deployment.yaml, service.yaml]\n",
	"apps/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: ${REPLICAS:=1}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ghcr.io/example/web:1.0.0
        env:
        - {name: CLUSTER, value: "${CLUSTER_NAME}-${REGION}"}
`,
	"apps/base/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: web
  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled, note: "${KEEP_ME}"}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`,
	"apps/prod/kustomization.yaml": "resources: [../base]\n",
	"apps/plain/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: plain}
spec:
  selector: {matchLabels: {app: plain}}
  template:
    metadata: {labels: {app: plain}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
`,
	"components/monitoring/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [servicemonitor.yaml]
`,
	"components/monitoring/servicemonitor.yaml": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  endpoints: [{port: http}]
`,
}

func writeFleet(t testing.TB) string {
	return testutil.WriteFiles(t, t.TempDir(), fleet)
}

// objects parses a file of the fleet.
func objects(t testing.TB, file string) []*yaml.RNode {
	t.Helper()
	nodes, err := readAll(fleet[file])
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func readAll(s string) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, doc := range strings.Split(s, "\n---\n") {
		n, err := yaml.Parse(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func find(t *testing.T, objs []*yaml.RNode, kind, name string) *yaml.RNode {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s in the render", kind, name)
	return nil
}

func TestRenderAsKustomizeController(t *testing.T) {
	root := writeFleet(t)
	ks := objects(t, "clusters/prod/apps.yaml")[0]
	render := append(objects(t, "clusters/prod/cluster-vars.yaml"), ks)
	got, err := Render(ks, root, render)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d objects, want Deployment, Service and the component's ServiceMonitor", len(got))
	}
	dep := find(t, got, "Deployment", "prod-web")
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"metadata", "namespace"}, "shop"},
		{[]string{"metadata", "labels", "tier"}, "frontend"},
		{[]string{"spec", "replicas"}, "3"},
		{[]string{"spec", "template", "spec", "containers", "[name=web]", "image"}, "ghcr.io/example/web:1.4.2"},
		{[]string{"spec", "template", "spec", "containers", "[name=web]", "env", "[name=CLUSTER]", "value"}, "prod-eu-eu-west-1"},
	} {
		if v := str(dep, c.path...); v != c.want {
			t.Errorf("Deployment %v = %q, want %q", c.path, v, c.want)
		}
	}
	svc := find(t, got, "Service", "prod-web")
	if v := str(svc, "metadata", "annotations", "note"); v != "${KEEP_ME}" {
		t.Errorf("substitute: disabled not honoured: note = %q", v)
	}
	if v := str(find(t, got, "ServiceMonitor", "prod-web"), "metadata", "namespace"); v != "shop" {
		t.Errorf("component object namespace = %q", v)
	}
}

func TestRenderGeneratesAKustomization(t *testing.T) {
	root := writeFleet(t)
	ks, _ := yaml.Parse(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: plain, namespace: flux-system}
spec:
  path: ./apps/plain
  sourceRef: {kind: GitRepository, name: flux-system}
  prune: true
`)
	got, err := Render(ks, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GetName() != "plain" || got[0].GetNamespace() != "" {
		t.Fatalf("got %d objects; a directory without kustomization.yaml renders its manifests as they are", len(got))
	}
}

func TestSubstituteFromOutsideTheRenderIsNoVerdict(t *testing.T) {
	root := writeFleet(t)
	ks := objects(t, "clusters/prod/apps.yaml")[0]
	_, err := Render(ks, root, []*yaml.RNode{ks})
	var nv *NoVerdictError
	if !errors.As(err, &nv) || !strings.Contains(nv.Reason, "ConfigMap flux-system/cluster-vars is not in the render") {
		t.Fatalf("err = %v", err)
	}
}

func TestPathLeavingTheCheckout(t *testing.T) {
	root := writeFleet(t)
	ks, _ := yaml.Parse("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x, namespace: flux-system}\nspec: {path: ../../etc}\n")
	if _, err := Render(ks, root, nil); err == nil || !strings.Contains(err.Error(), "leaves the repository") {
		t.Fatalf("err = %v", err)
	}
}

func TestSources(t *testing.T) {
	sync := objects(t, "clusters/prod/flux-system/gotk-sync.yaml")
	ks := objects(t, "clusters/prod/apps.yaml")[0]
	if !IsKustomization(ks) || IsKustomization(sync[0]) || !IsGitRepository(sync[0]) {
		t.Fatal("kind detection")
	}
	ref := KustomizationSource(ks)
	if ref != (SourceRef{Kind: "GitRepository", Name: "flux-system", Namespace: "flux-system"}) {
		t.Fatalf("ref = %+v", ref)
	}
	if src := FindSource(ref, sync); src == nil || str(src, "spec", "url") != "ssh://git@github.com/example/fleet" {
		t.Fatal("FindSource did not find the GitRepository")
	}
}

func TestSubstituteStrategyAlways(t *testing.T) {
	root := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\ndata: {replicas: '${REPLICAS:=2}'}\n",
	})
	for strategy, want := range map[string]string{"": "${REPLICAS:=2}", "Always": "2"} {
		ks, _ := yaml.Parse("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k, namespace: flux-system}\nspec: {path: ./app, postBuild: {substituteStrategy: '" + strategy + "'}}\n")
		got, err := Render(ks, root, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := str(got[0], "data", "replicas"); v != want {
			t.Errorf("substituteStrategy %q: replicas = %q, want %q", strategy, v, want)
		}
	}
}

// TestAliasesRefused: a file the Flux build reads (a resource of the
// path's kustomization, or a manifest the generator lists where there is
// none) with an alias inside its own anchor, or aliases that expand
// without bound, is refused by name, as -k refuses it: kyaml's reader
// overflowed the stack (the gate died with a runtime trace) or expanded a
// billion laughs for a minute and 8 GB. An ordinary alias renders.
func TestAliasesRefused(t *testing.T) {
	const cycle = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: &a {b: [*a]}\n"
	laughs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a0: &a0 [lol]\n"
	for i := 1; i <= 9; i++ {
		laughs += "  a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat("*a"+string(rune('0'+i-1))+", ", 8) + "*a" + string(rune('0'+i-1)) + "]\n"
	}
	const ordinary = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, labels: {app: &n web}}\ndata: {app: *n}\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a resource of the kustomization", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": cycle}, "cm.yaml: document 1 (counting from 1): line 4: alias *a is inside"},
		{"a manifest the generator lists", map[string]string{"app/cm.yaml": cycle}, "cm.yaml: document 1 (counting from 1): line 4: alias *a is inside"},
		{"a manifest below the path", map[string]string{"app/sub/cm.yaml": laughs}, "excessive aliasing"},
		{"a base's resource", map[string]string{"app/kustomization.yaml": "resources: [base]\n", "app/base/kustomization.yaml": "resources: [cm.yaml]\n", "app/base/cm.yaml": laughs}, "excessive aliasing"},
		{"a patch", map[string]string{"app/kustomization.yaml": "resources: [ok.yaml]\npatches: [{path: p.yaml}]\n", "app/ok.yaml": ordinary, "app/p.yaml": cycle}, "p.yaml: document 1 (counting from 1): line 4: alias *a is inside"},
		{"an ordinary alias in a listed manifest", map[string]string{"app/ok.yaml": ordinary}, ""},
		{"an ordinary alias in a resource", map[string]string{"app/kustomization.yaml": "resources: [ok.yaml]\n", "app/ok.yaml": ordinary}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := testutil.WriteFiles(t, t.TempDir(), c.files)
			ks, _ := yaml.Parse("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\nspec: {path: ./app, sourceRef: {kind: GitRepository, name: flux-system}}\n")
			start := time.Now()
			got, err := Render(ks, root, nil)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if c.want == "" {
				if err != nil || len(got) != 1 || str(got[0], "data", "app") != "web" {
					t.Fatalf("%d objects, %v", len(got), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
