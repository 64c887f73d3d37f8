package helm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

const blueGreen = "testdata/charts/bluegreen"

// objects renders a chart and indexes its objects by "Kind/name".
func objects(t *testing.T, dir string, o Options) map[string]*yaml.RNode {
	t.Helper()
	nodes, err := Render(context.Background(), dir, "charts/"+filepath.Base(dir), o)
	if err != nil {
		t.Fatalf("Render(%s): %v", dir, err)
	}
	m := map[string]*yaml.RNode{}
	for _, n := range nodes {
		k := n.GetKind() + "/" + n.GetName()
		if m[k] != nil {
			t.Fatalf("%s rendered twice", k)
		}
		m[k] = n
	}
	return m
}

func field(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		t.Fatalf("%s/%s has no %v", n.GetKind(), n.GetName(), path)
	}
	return v.YNode().Value
}

func TestRenderBlueGreen(t *testing.T) {
	got := objects(t, blueGreen, Options{ReleaseName: "shop", Namespace: "prod"})
	want := []string{
		"Rollout/shop-bluegreen", "Service/shop-bluegreen", "Service/shop-bluegreen-preview",
		"PodDisruptionBudget/shop-bluegreen", "ServiceMonitor/shop-metrics",
		"Job/shop-bluegreen-migrate", "Pod/shop-bluegreen-smoke",
	}
	for _, k := range want {
		if got[k] == nil {
			t.Errorf("%s not rendered", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rendered %d objects, want %d: %v", len(got), len(want), keys(got))
	}
	ro := got["Rollout/shop-bluegreen"]
	if v := field(t, ro, "spec", "strategy", "blueGreen", "autoPromotionEnabled"); v != "false" {
		t.Errorf("autoPromotionEnabled = %s, want false (values.yaml)", v)
	}
	if ns := ro.GetNamespace(); ns != "prod" {
		t.Errorf("namespace = %q, want the release namespace prod", ns)
	}
	for k, src := range map[string]string{
		"Rollout/shop-bluegreen":         "charts/bluegreen/templates/rollout.yaml",
		"Service/shop-bluegreen-preview": "charts/bluegreen/templates/services.yaml",
		"ServiceMonitor/shop-metrics":    "charts/bluegreen/charts/metrics/templates/servicemonitor.yaml",
		"Job/shop-bluegreen-migrate":     "charts/bluegreen/templates/migrate-job.yaml",
	} {
		if a := yamlpath.Annotation(got[k].YNode(), AnnoSource); a != src {
			t.Errorf("%s: %s = %q, want %q", k, AnnoSource, a, src)
		}
	}
	if v := got["PodDisruptionBudget/shop-bluegreen"].GetApiVersion(); v != "policy/v1" {
		t.Errorf("PodDisruptionBudget apiVersion = %s, want policy/v1 (helm's default API versions)", v)
	}
}

func keys(m map[string]*yaml.RNode) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRenderValues(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "prod.yaml")
	if err := os.WriteFile(vf, []byte("replicaCount: 5\nbluegreen:\n  autoPromotion: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		o        Options
		replicas string
		auto     string
	}{
		{"values file", Options{ValueFiles: []string{vf}}, "5", "true"},
		{"set after file", Options{ValueFiles: []string{vf}, Set: []string{"bluegreen.autoPromotion=false"}}, "5", "false"},
		{"inline after file", Options{ValueFiles: []string{vf}, InlineValues: [][]byte{[]byte("replicaCount: 7")}}, "7", "true"},
		{"set over inline", Options{InlineValues: [][]byte{[]byte("replicaCount: 7")}, Set: []string{"replicaCount=2"}}, "2", "false"},
		{"set-json", Options{SetJSON: []string{`bluegreen={"autoPromotion":true}`}}, "3", "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := objects(t, blueGreen, tt.o)["Rollout/release-name-bluegreen"]
			if ro == nil {
				t.Fatal("no Rollout")
			}
			if v := field(t, ro, "spec", "replicas"); v != tt.replicas {
				t.Errorf("replicas = %s, want %s", v, tt.replicas)
			}
			if v := field(t, ro, "spec", "strategy", "blueGreen", "autoPromotionEnabled"); v != tt.auto {
				t.Errorf("autoPromotionEnabled = %s, want %s", v, tt.auto)
			}
		})
	}
}

func TestRenderFlags(t *testing.T) {
	t.Run("include-crds", func(t *testing.T) {
		crd := objects(t, blueGreen, Options{IncludeCRDs: true})["CustomResourceDefinition/shopconfigs.example.com"]
		if crd == nil {
			t.Fatal("CRD not rendered with IncludeCRDs")
		}
		if a := yamlpath.Annotation(crd.YNode(), AnnoSource); a != "charts/bluegreen/crds/shopconfig.yaml" {
			t.Errorf("CRD source = %q", a)
		}
	})
	t.Run("api-versions", func(t *testing.T) {
		if objects(t, blueGreen, Options{APIVersions: []string{"gateway.networking.k8s.io/v1"}})["HTTPRoute/release-name-bluegreen"] == nil {
			t.Error("HTTPRoute not rendered although the API version was given")
		}
	})
	t.Run("kube-version", func(t *testing.T) {
		job := objects(t, blueGreen, Options{KubeVersion: "v1.31.4"})["Job/release-name-bluegreen-migrate"]
		s, _ := job.String()
		if !strings.Contains(s, "--kube=v1.31.4") {
			t.Errorf("Job does not see the kube version:\n%s", s)
		}
	})
	t.Run("skip-tests", func(t *testing.T) {
		got := objects(t, blueGreen, Options{SkipTests: true})
		if got["Pod/release-name-bluegreen-smoke"] != nil || got["Job/release-name-bluegreen-migrate"] == nil {
			t.Errorf("SkipTests: %v", keys(got))
		}
	})
	t.Run("no-hooks", func(t *testing.T) {
		got := objects(t, blueGreen, Options{NoHooks: true})
		if got["Pod/release-name-bluegreen-smoke"] != nil || got["Job/release-name-bluegreen-migrate"] != nil {
			t.Errorf("NoHooks: %v", keys(got))
		}
	})
	t.Run("condition", func(t *testing.T) {
		if objects(t, blueGreen, Options{Set: []string{"metrics.enabled=false"}})["ServiceMonitor/release-name-metrics"] != nil {
			t.Error("disabled subchart rendered")
		}
	})
}

func TestRenderErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		dir  string
		o    Options
		want string
	}{
		{"schema", blueGreen, Options{Set: []string{"replicaCount=0"}}, "minimum"},
		{"missing values file", blueGreen, Options{ValueFiles: []string{"testdata/nope.yaml"}}, "nope.yaml"},
		{"remote values file", blueGreen, Options{ValueFiles: []string{"https://example.com/v.yaml"}}, "only local files"},
		{"stdin values", blueGreen, Options{ValueFiles: []string{"-"}}, "only local files"},
		{"inline not a map", blueGreen, Options{InlineValues: [][]byte{[]byte("- a")}}, "inline values #1"},
		{"bad kube version", blueGreen, Options{KubeVersion: "one"}, "kube version"},
		{"chart kubeVersion", blueGreen, Options{KubeVersion: "v1.20.0"}, "requires kubeVersion"},
		{"not a chart", "testdata", Options{}, "no Chart.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(ctx, tt.dir, "c", tt.o)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	t.Run("schema skipped", func(t *testing.T) {
		if _, err := Render(ctx, blueGreen, "c", Options{Set: []string{"replicaCount=0"}, SkipSchemaValidation: true}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRemoteDependency(t *testing.T) {
	_, err := Render(context.Background(), "testdata/charts/remote-dep", "c", Options{})
	var de *DependencyError
	if !errors.As(err, &de) {
		t.Fatalf("error = %v, want a *DependencyError", err)
	}
	if de.Name != "redis" || de.Version != "20.6.2" || de.Repository != "https://charts.bitnami.com/bitnami" {
		t.Errorf("DependencyError = %+v, want redis 20.6.2 (the Chart.lock version) from bitnami", de)
	}
	for _, s := range []string{"redis", "20.6.2", "https://charts.bitnami.com/bitnami"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q does not name %s", err, s)
		}
	}

	// An empty cache does not help; a cache holding the locked version does.
	cache := t.TempDir()
	if _, err := Render(context.Background(), "testdata/charts/remote-dep", "c", Options{RepoCache: cache}); !errors.As(err, &de) || de.Cache != cache {
		t.Fatalf("empty cache: error = %v", err)
	}
	packageChart(t, "testdata/charts/bluegreen/charts/metrics", "redis", "20.6.2", cache)
	packageChart(t, "testdata/charts/bluegreen/charts/metrics", "redis", "19.0.0", cache)
	got := objects(t, "testdata/charts/remote-dep", Options{RepoCache: cache})
	sm := got["ServiceMonitor/release-name-metrics"]
	if sm == nil {
		t.Fatalf("cached dependency not rendered: %v", keys(got))
	}
	if a := yamlpath.Annotation(sm.YNode(), AnnoSource); a != "charts/remote-dep/charts/redis/templates/servicemonitor.yaml" {
		t.Errorf("source = %q", a)
	}
}

// packageChart writes the chart at dir, renamed and re-versioned, as
// cache/<name>-<version>.tgz, the layout of helm's repository cache.
func packageChart(t *testing.T, dir, name, version, cache string) {
	t.Helper()
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Name, ch.Metadata.Version = name, version
	if _, err := chartutil.Save(ch, cache); err != nil {
		t.Fatal(err)
	}
}

func TestFileDependency(t *testing.T) {
	got := objects(t, "testdata/charts/file-dep", Options{})
	sm := got["ServiceMonitor/release-name-metrics"]
	if sm == nil {
		t.Fatalf("file:// dependency not rendered: %v", keys(got))
	}
	// The template's file is where the dependency was loaded from, not
	// charts/metrics under the chart (not there: helm names it so).
	if a := yamlpath.Annotation(sm.YNode(), AnnoSource); a != "charts/bluegreen/charts/metrics/templates/servicemonitor.yaml" {
		t.Errorf("source = %q, want the file:// directory's template", a)
	}
	if v := got["ConfigMap/release-name-settings"].GetDataMap()["interval"]; v != "30s" {
		t.Errorf("interval = %q", v)
	}
}

// TestTemplateRaisesFloor: rendering a chart raises the heap floor to
// gcfloor.RenderFloor (a render's garbage), and sets none where the user's
// GOGC left the process without one.
func TestTemplateRaisesFloor(t *testing.T) {
	testutil.RaisesFloor(t, gcfloor.RenderFloor, func() error {
		_, err := Template(context.Background(), blueGreen, Options{ReleaseName: "shop"})
		return err
	})
}

// TestRenderYAML11AsHelmInstall: helm install (kube.Client.Build, through
// cli-runtime's reader), Argo CD's repo-server and Flux decode a chart's
// rendered text with sigs.k8s.io/yaml, as YAML 1.1: a template's plain
// `tier: on` is the boolean true, which the API server refuses in a label.
// Render reads it so. Parse, which kustomize's helmCharts goes through
// (Command), leaves it as kustomize reads it: the string "on".
func TestRenderYAML11AsHelmInstall(t *testing.T) {
	const dir = "testdata/charts/yaml11"
	tier := func(n *yaml.RNode) *yaml.Node {
		v, err := n.Pipe(yaml.Lookup("metadata", "labels", "tier"))
		if err != nil || v == nil {
			t.Fatalf("no tier label: %v", err)
		}
		return v.YNode()
	}
	if n := tier(objects(t, dir, Options{})["Deployment/release-name"]); n.ShortTag() != "!!bool" || n.Value != "true" {
		t.Errorf("Render: tier is %s %q, helm install sends the boolean true", n.ShortTag(), n.Value)
	}
	docs, err := Template(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Parse(docs, dir)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Parse: %d objects, %v", len(objs), err)
	}
	if n := tier(objs[0]); n.ShortTag() != "!!str" || n.Value != "on" {
		t.Errorf("Parse (kustomize's helmCharts): tier is %s %q, kustomize reads the string on", n.ShortTag(), n.Value)
	}
}
