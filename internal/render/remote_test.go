package render

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RemoteRefs finds the remote entries of the whole local kustomization
// tree, and only those: local files and directories, and a missing local
// file, are not remote.
func TestRemoteRefs(t *testing.T) {
	dir := tree(t, with(map[string]string{
		"overlay/kustomization.yaml": "resources:\n- ../base\n- pod.yaml\n- missing.yaml\n- https://example.com/a.yaml\ncomponents:\n- ../comp\n" +
			"transformers:\n- https://example.com/fn.yaml\n- '{apiVersion: example.com/v1, kind: Fn, metadata: {name: example.com/x}}'\n- |\n  apiVersion: builtin\n  kind: LabelTransformer\n  metadata: {name: example.com/l}\n  labels: {a: b}\n  fieldSpecs: [{path: metadata/labels, create: true}]\n" +
			"generators: [gens]\nvalidators: ['git::https://example.com/v.git//fn']\n",
		"overlay/gens/kustomization.yaml": "resources: [https://example.com/gen.yaml]\n",
		"overlay/pod.yaml":                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
		"comp/kustomization.yaml":         "kind: Component\nresources:\n- github.com/org/repo//deploy?ref=v1\n- gitlab.example.com/org/repo//x\n",
		"base/kustomization.yaml":         "resources: [cm.yaml]\nbases: ['git::https://example.com/r.git']\n",
	}))
	refs, err := RemoteRefs(filepath.Join(dir, "overlay"), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.Field+" "+r.Entry)
	}
	slices.Sort(got)
	want := []string{"bases git::https://example.com/r.git", "resources github.com/org/repo//deploy?ref=v1", "resources gitlab.example.com/org/repo//x",
		"resources https://example.com/a.yaml", "resources https://example.com/gen.yaml", "transformers https://example.com/fn.yaml", "validators git::https://example.com/v.git//fn"}
	if !slices.Equal(got, want) {
		t.Errorf("remote entries\n got %q\nwant %q", got, want)
	}
}

// --no-remote refuses a remote resource before kustomize fetches it,
// naming the kustomization and the URL; without it kustomize fetches it
// (the server is asked), which is what the refusal prevents.
func TestKustomizeNoRemote(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/cm.yaml"
	dir := tree(t, with(map[string]string{"overlay/kustomization.yaml": "resources:\n- ../base\n- " + url + "\n"}))
	overlay := filepath.Join(dir, "overlay")

	_, err := Kustomize(overlay, Options{NoRemote: true})
	var re *RemoteError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), filepath.Join(overlay, "kustomization.yaml")) || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v, want a RemoteError naming the kustomization and %s", err, url)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the remote server was asked %d times under NoRemote", n)
	}

	res, err := Kustomize(overlay, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() == 0 || len(res.Resources) != 2 || len(res.Remote) != 1 {
		t.Errorf("without NoRemote: %d requests, %d resources, remote %v; want the URL fetched", hits.Load(), len(res.Resources), res.Remote)
	}
}

// TestKustomizeNoRemoteEditedComponents: components that an Argo CD
// Application's kustomize overrides add to the top-level kustomization are
// held to --no-remote too, remote ones and local ones that name remote
// resources; nothing is fetched.
func TestKustomizeNoRemoteEditedComponents(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	dir := tree(t, with(map[string]string{
		"overlay/kustomization.yaml":   "resources:\n- ../base\n",
		"comp/kustomization.yaml":      "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- " + srv.URL + "/cm.yaml\n",
		"localcomp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: x-\n",
	}))
	overlay := filepath.Join(dir, "overlay")
	for _, c := range []struct {
		name       string
		components string
		want       string
	}{
		{"remote component", "[" + srv.URL + "/comp]", srv.URL + "/comp"},
		{"local component naming a remote resource", "[../comp]", srv.URL + "/cm.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edit, err := ArgoKustomizeEdit(yaml.MustParse("components: "+c.components+"\n"), overlay)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Kustomize(overlay, Options{NoRemote: true, EditTop: edit})
			var re *RemoteError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a RemoteError naming %s", err, c.want)
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the remote server was asked %d times under NoRemote", n)
			}
		})
	}
	// A local component without remote entries renders.
	edit, err := ArgoKustomizeEdit(yaml.MustParse("components: [../localcomp]\n"), overlay)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Kustomize(overlay, Options{NoRemote: true, EditTop: edit})
	if err != nil || len(res.Resources) != 1 || res.Resources[0].GetName() != "x-cfg" {
		t.Fatalf("local component: err = %v, resources %v", err, res)
	}
}
