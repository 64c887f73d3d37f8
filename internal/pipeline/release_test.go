package pipeline_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// estate is a checkout whose Applications' sources are leaves (they deploy
// no Application of their own), with what the cross-unit rules judge: two
// sources rendering the same ConfigMap identically and a third with other
// content (app-shared-object), a source rendering into another namespace
// than its Application's destination and one setting none where the
// Application has none (argocd-destination-namespace), an empty source
// (argocd-source-empty), a cluster-scoped object and a custom kind whose
// CRD makes it cluster-scoped, and a finding of a rule on the source
// itself (an image by tag).
func estate(t *testing.T) string { return estateWith(t, "ghcr.io/example/web:1") }

// estateWith is estate with the image of source a's workload.
func estateWith(t *testing.T, image string) string {
	cm := func(value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: shop}\ndata: {k: " + value + "}\n"
	}
	noDest := strings.Replace(application("nodest", "src/nodest", "x"), ", namespace: x}", "}", 1)
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"apps/kustomization.yaml":        "resources: [a.yaml, b.yaml, c.yaml, wrong.yaml, nodest.yaml, empty.yaml, cluster.yaml]\n",
		"apps/a.yaml":                    application("a", "src/a", "shop"),
		"apps/b.yaml":                    application("b", "src/b", "shop"),
		"apps/c.yaml":                    application("c", "src/c", "shop"),
		"apps/wrong.yaml":                application("wrong", "src/wrong", "shop"),
		"apps/nodest.yaml":               noDest,
		"apps/empty.yaml":                application("empty", "src/empty", "shop"),
		"apps/cluster.yaml":              application("cluster", "src/cluster", "shop"),
		"src/a/kustomization.yaml":       "resources: [cm.yaml, web.yaml]\n",
		"src/a/cm.yaml":                  cm("one"),
		"src/a/web.yaml":                 web(image),
		"src/b/kustomization.yaml":       "resources: [cm.yaml]\n",
		"src/b/cm.yaml":                  cm("one"),
		"src/c/kustomization.yaml":       "resources: [cm.yaml]\n",
		"src/c/cm.yaml":                  cm("two"),
		"src/wrong/kustomization.yaml":   "namespace: elsewhere\nresources: [cm.yaml]\n",
		"src/wrong/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\n",
		"src/nodest/kustomization.yaml":  "resources: [cm.yaml]\n",
		"src/nodest/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\n",
		"src/empty/kustomization.yaml":   "resources: []\n",
		"src/cluster/kustomization.yaml": "resources: [objs.yaml]\n",
		"src/cluster/objs.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`,
	})
}

// TestReleaseRendersChangesNothing: a run that checks each leaf source as
// soon as it is rendered and drops its render (Options.ReleaseRenders)
// reports exactly what a run holding every render reports, on an estate
// with every cross-unit rule firing and on one where a later level names
// one more Application deploying a source already checked (shop: the
// ApplicationSet's prod element).
func TestReleaseRendersChangesNothing(t *testing.T) {
	for name, root := range map[string]string{"estate": estate(t), "shop": shop(t)} {
		t.Run(name, func(t *testing.T) {
			in := pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}, AppsRoot: root, RepoURLs: []string{repoURL}}
			run := func(release bool) (*pipeline.Result, string) {
				res, err := pipeline.Run(context.Background(), in, pipeline.Options{ReleaseRenders: release})
				if err != nil {
					t.Fatal(err)
				}
				rep := res.Report()
				var units []string
				for _, u := range res.Units {
					units = append(units, u.Input()+" | "+u.Config)
				}
				b, err := json.MarshalIndent(struct {
					Units  []string
					Report any
				}{units, rep}, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				return res, string(b)
			}
			_, whole := run(false)
			res, released := run(true)
			if whole != released {
				t.Errorf("released renders change the report:\nwhole:\n%s\nreleased:\n%s", whole, released)
			}
			dropped := 0
			for _, u := range byType[*pipeline.AppSource](res) {
				if u.Resources == nil && u.Err == nil {
					dropped++
				}
			}
			if name == "estate" {
				for _, rule := range []string{"app-shared-object", "argocd-destination-namespace", "argocd-source-empty", "image-digest"} {
					if !strings.Contains(whole, `"rule": "`+rule+`"`) {
						t.Errorf("the estate must make %s fire", rule)
					}
				}
				if want := 7; dropped != want {
					t.Errorf("want the %d leaf sources' renders released, got %d", want, dropped)
				}
			}
		})
	}
}
