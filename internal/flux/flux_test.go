package flux

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestReadsBounded: every file the Flux render reads from the checkout
// goes through the gate's filesystem boundary (internal/fsbound), as -k's
// does: a FIFO is refused by name, not waited on; a symlink out of the
// checkout is refused by name, not followed; a file over the cap is
// refused by name, not read. In a kustomization's resources, in the
// kustomization file itself, and in the manifests Flux's generator lists
// where the path has none. A hang ends the test at its deadline.
func TestReadsBounded(t *testing.T) {
	outside := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: s3cr3t}\n",
		"kbase/kustomization.yaml": "resources: [cm.yaml]\n",
		"kbase/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: s3cr3t}\n",
	})
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata: {a: b}\n"
	big := strings.Repeat("# padding\n", 200) + strings.Replace(cm, "name: ok", "name: big", 1)
	fifo := func(name string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			if err := syscall.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(name, target string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"a resource is a FIFO", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n"}, fifo("app/cm.yaml"), "cm.yaml is not a regular file (a FIFO)"},
		{"the kustomization is a FIFO", map[string]string{"app/cm.yaml": cm}, fifo("app/kustomization.yaml"), "kustomization.yaml is not a regular file (a FIFO)"},
		{"a listed manifest is a FIFO", map[string]string{"app/ok.yaml": cm}, fifo("app/cm.yaml"), "cm.yaml is not a regular file (a FIFO)"},
		{"a resource is a symlink to /dev/zero", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n"}, link("app/cm.yaml", "/dev/zero"), "app/cm.yaml is a symlink that leaves"},
		{"a resource is a symlink out of the checkout", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n"}, link("app/cm.yaml", filepath.Join(outside, "cm.yaml")), "app/cm.yaml is a symlink that leaves"},
		{"a listed manifest is a symlink out of the checkout", map[string]string{"app/ok.yaml": cm}, link("app/cm.yaml", filepath.Join(outside, "cm.yaml")), "app/cm.yaml is a symlink that leaves"},
		{"the kustomization is a symlink out of the checkout", map[string]string{"app/cm.yaml": cm}, link("app/kustomization.yaml", filepath.Join(outside, "kbase", "kustomization.yaml")), "app/kustomization.yaml is a symlink that leaves"},
		{"a base is a directory symlink out of the checkout", map[string]string{"app/kustomization.yaml": "resources: [base]\n"}, link("app/base", filepath.Join(outside, "kbase")), "app/base is a symlink that leaves"},
		{"a resource over the cap", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "app/cm.yaml": big}, nil, "cm.yaml is larger than 1000 bytes"},
		{"the kustomization over the cap", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n" + strings.Repeat("# padding\n", 200), "app/cm.yaml": cm}, nil, "kustomization.yaml is larger than 1000 bytes"},
		{"a listed manifest over the cap", map[string]string{"app/ok.yaml": cm, "app/cm.yaml": big}, nil, "cm.yaml is larger than 1000 bytes"},
		{"a listed manifest under the cap", map[string]string{"app/ok.yaml": cm}, nil, ""},
		{"a resource under the cap linked inside", map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\n", "common/cm.yaml": cm}, link("app/cm.yaml", "../common/cm.yaml"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := testutil.WriteFiles(t, t.TempDir(), c.files)
			if c.setup != nil {
				c.setup(t, root)
			}
			ks, _ := yaml.Parse("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\nspec: {path: ./app, sourceRef: {kind: GitRepository, name: flux-system}}\n")
			type result struct {
				objs []*yaml.RNode
				err  error
			}
			done := make(chan result, 1)
			go func() {
				objs, _, err := render(ks, root, nil, false, 1000)
				done <- result{objs, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				// The render waits on the FIFO for a writer: be one, so
				// the render (and Flux's build lock) is released.
				for r.objs == nil {
					unblockFIFOs(root)
					select {
					case r = <-done:
						r.objs = []*yaml.RNode{}
					case <-time.After(100 * time.Millisecond):
					}
				}
				t.Fatal("the render waited on a FIFO for 10s")
			}
			if c.want == "" {
				if r.err != nil || len(r.objs) != 1 || r.objs[0].GetName() != "ok" {
					t.Fatalf("%d objects, %v", len(r.objs), r.err)
				}
				return
			}
			if r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", r.err, c.want)
			}
			if strings.Contains(r.err.Error(), "s3cr3t") {
				t.Fatalf("the error quotes what lies outside: %v", r.err)
			}
		})
	}
}

// unblockFIFOs opens every FIFO below root for writing and closes it: a
// reader blocked on one then reads EOF.
func unblockFIFOs(root string) {
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeNamedPipe != 0 {
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close()
			}
		}
		return nil
	})
}
