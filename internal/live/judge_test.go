package live_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/live"
)

const (
	shaA   = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB   = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	commit = "4f3c2a1e9b8d7c6f5a4b3c2d1e0f9a8b7c6d5e4f"
	webImg = "registry.example/web:1.2@" + shaA
)

// app is an Application synced at commit, managing a Deployment and a
// Service, with its summary images.
func app(t *testing.T, extra string) *unstructured.Unstructured {
	return obj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  destination: {namespace: shop}
status:
  sync: {status: Synced, revision: `+commit+`}
  health: {status: Healthy}
  summary: {images: ["`+webImg+`"]}
  resources:
  - {version: v1, kind: Service, namespace: shop, name: web}
  - {group: apps, version: v1, kind: Deployment, namespace: shop, name: web}
`+extra)
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 1}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "` + webImg + `"}]}
status:
  observedGeneration: 1
  conditions: [{type: Available, status: "True"}]
`

func pod(t *testing.T, name, image, imageID, phase string) unstructured.Unstructured {
	return *obj(t, fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: shop, labels: {app: web}}
spec: {containers: [{name: web, image: "%s"}]}
status:
  phase: %s
  containerStatuses: [{name: web, imageID: "%s"}]
`, name, image, phase, imageID))
}

// snapshot builds a snapshot of the app with the given live objects (by
// the order of status.resources; nil = missing) and pods.
func snapshot(t *testing.T, a *unstructured.Unstructured, objs []*unstructured.Unstructured, pods ...unstructured.Unstructured) *live.Snapshot {
	s := &live.Snapshot{App: live.ParseApp(a), AppObject: a, Pods: map[string][]unstructured.Unstructured{"shop": pods}}
	for i, ref := range s.App.Resources {
		o := live.Object{Ref: ref, Missing: "not found in the cluster"}
		if i < len(objs) && objs[i] != nil {
			o.Live, o.Missing = objs[i], ""
		}
		s.Objects = append(s.Objects, o)
	}
	return s
}

func outOfSync(t *testing.T) *unstructured.Unstructured {
	a := app(t, "")
	if err := unstructured.SetNestedField(a.Object, "OutOfSync", "status", "sync", "status"); err != nil {
		t.Fatal(err)
	}
	return a
}

func service(t *testing.T) *unstructured.Unstructured {
	return obj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {selector: {app: web}}")
}

func fired(r *live.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, string(f.Severity)+":"+f.Rule)
	}
	return out
}

func TestJudge(t *testing.T) {
	running := pod(t, "web-1", webImg, "registry.example/web@"+shaA, "Running")
	renderYAML := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n" + strings.TrimSpace(deployment) +
		"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: local, annotations: {config.kubernetes.io/local-config: \"true\"}}\n"
	render, err := kio.FromBytes([]byte(renderYAML))
	if err != nil {
		t.Fatal(err)
	}
	off := config.Default()
	off.Rules["live-images"] = "off"
	off.Rules["live-revision"] = "warning"
	cases := []struct {
		name string
		snap *live.Snapshot
		exp  live.Expect
		want []string
	}{
		{"synced and healthy", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)}, running),
			live.Expect{Revision: commit}, nil},
		{"abbreviated expected commit", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)}, running),
			live.Expect{Revision: commit[:8]}, nil},
		{"revision behind", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)}, running),
			live.Expect{Revision: "0123456789012345678901234567890123456789"}, []string{"error:live-revision"}},
		{"old pod runs a digest that is not expected", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)},
			running, pod(t, "web-0", "registry.example/web:1.1", "registry.example/web@"+shaB, "Running")),
			live.Expect{}, []string{"error:live-images"}},
		{"tag in the pod, matching digest in imageID", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)},
			pod(t, "web-1", "registry.example/web:1.2", "docker-pullable://registry.example/web@"+shaA, "Running")),
			live.Expect{}, nil},
		{"expected image runs nowhere; finished pods do not count", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)},
			pod(t, "web-1", webImg, "", "Succeeded")),
			live.Expect{}, []string{"error:live-images"}},
		{"render count matches (local config left out)", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)}, running),
			live.Expect{Render: render, HasRender: true, RenderFrom: "-k x"}, nil},
		{"render holds fewer objects", snapshot(t, app(t, "  - {version: v1, kind: ConfigMap, namespace: shop, name: extra}"),
			[]*unstructured.Unstructured{service(t), obj(t, deployment), obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: shop}")}, running),
			live.Expect{Render: render, HasRender: true, RenderFrom: "-k x"}, []string{"error:live-resource-count"}},
		{"managed object is gone", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), nil}),
			live.Expect{}, []string{"error:live-images", "error:live-resource-count"}},
		{"revision is new but Argo CD says OutOfSync (the sync failed)", snapshot(t, outOfSync(t), []*unstructured.Unstructured{service(t), obj(t, deployment)}, running),
			live.Expect{Revision: commit}, []string{"error:live-revision"}},
		{"config: images off, revision a warning", snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), obj(t, deployment)}),
			live.Expect{Revision: "0123456789012345678901234567890123456789", Config: off}, []string{"warning:live-revision"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := live.Judge(c.snap, c.exp)
			got := fired(r)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("findings = %v, want %v", got, c.want)
				for _, f := range r.Findings {
					t.Logf("  %s %s: %s", f.Rule, f.ResourceRef, f.Message)
				}
			}
		})
	}
}

func TestJudgeEmptyAppAndHealth(t *testing.T) {
	empty := obj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
status: {sync: {status: Synced, revision: `+commit+`}}`)
	r := live.Judge(snapshot(t, empty, nil), live.Expect{})
	if got := fired(r); !slices.Equal(got, []string{"error:live-resource-count"}) {
		t.Errorf("empty app: findings = %v, want live-resource-count", got)
	}
	bad := obj(t, strings.Replace(deployment, `status: "True"`, `status: "False"`, 1))
	r = live.Judge(snapshot(t, app(t, ""), []*unstructured.Unstructured{service(t), bad}, pod(t, "web-1", webImg, "", "Running")), live.Expect{})
	if got := fired(r); !slices.Equal(got, []string{"error:live-health"}) || len(r.Unhealthy) != 1 {
		t.Errorf("unhealthy deployment: findings = %v, unhealthy = %v, want one live-health", got, r.Unhealthy)
	}
}

func TestJudgeIgnoreDifferencesOnTheLiveApplication(t *testing.T) {
	a := obj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  ignoreDifferences:
  - {group: apps, kind: Deployment, jsonPointers: [/spec/template]}
  - {group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}
status:
  resources: [{version: v1, kind: Service, namespace: shop, name: web}]`)
	r := live.Judge(snapshot(t, a, []*unstructured.Unstructured{service(t)}), live.Expect{})
	if got := fired(r); !slices.Equal(got, []string{"error:argocd-ignore-differences"}) {
		t.Errorf("findings = %v, want one argocd-ignore-differences (the /spec/template entry)", got)
	}
}

func TestJudgeMultiSource(t *testing.T) {
	a := obj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec: {sources: [{repoURL: a}, {repoURL: b}]}
status:
  sync: {status: Synced, revisions: ["1111111111111111111111111111111111111111", `+commit+`]}
  resources: [{version: v1, kind: Service, namespace: shop, name: web}]`)
	s := snapshot(t, a, []*unstructured.Unstructured{service(t)})
	if got := fired(live.Judge(s, live.Expect{Revision: commit})); got != nil {
		t.Errorf("expected commit among status.sync.revisions: findings = %v, want none", got)
	}
	r := live.Judge(s, live.Expect{Revision: "2222222222222222222222222222222222222222"})
	if got := fired(r); !slices.Equal(got, []string{"error:live-revision"}) || r.Findings[0].Field.Path != "status.sync.revisions" {
		t.Errorf("findings = %v (%+v), want live-revision on status.sync.revisions", got, r.Findings)
	}
}
