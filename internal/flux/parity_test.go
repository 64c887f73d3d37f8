package flux

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestFluxBuildParity renders Kustomizations of the fleet with Render and
// with the flux CLI (`flux build kustomization --dry-run`, built by `make
// flux-tools` from the module proxy) and compares every object, identity
// and content. `flux build` stamps the owner labels
// kustomize.toolkit.fluxcd.io/name and /namespace that kustomize-controller
// adds at apply time; they are removed before comparing. --dry-run reads
// no ConfigMaps or Secrets, so the cases inline their variables.
func TestFluxBuildParity(t *testing.T) {
	flux := testutil.Tool(t, "FLUX", "flux")
	files := map[string]string{}
	for k, v := range fleet {
		files[k] = v
	}
	files["clusters/prod/apps-inline.yaml"] = strings.Replace(strings.Replace(fleet["clusters/prod/apps.yaml"],
		"    substituteFrom:\n    - {kind: ConfigMap, name: cluster-vars}\n", "", 1),
		"substitute: {REGION: eu-west-1}", "substitute: {REGION: eu-west-1, CLUSTER_NAME: prod-eu, REPLICAS: \"4\"}", 1)
	files["clusters/prod/plain.yaml"] = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: plain, namespace: flux-system}
spec: {interval: 5m, path: ./apps/plain, prune: true, sourceRef: {kind: GitRepository, name: flux-system}, namePrefix: p-, nameSuffix: -x, targetNamespace: web}
`
	files["clusters/prod/defaults.yaml"] = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: defaults, namespace: flux-system}
spec:
  interval: 5m
  path: ./apps/base
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: shop
  postBuild: {substituteStrategy: Always}
`
	// With every variable set but REPLICAS, substituteStrategy: Always
	// applies ${REPLICAS:=1}.
	files["clusters/prod/defaults-set.yaml"] = strings.Replace(strings.Replace(files["clusters/prod/defaults.yaml"],
		"name: defaults,", "name: defaults-set,", 1),
		"postBuild: {substituteStrategy: Always}", "postBuild: {substituteStrategy: Always, substitute: {CLUSTER_NAME: prod, REGION: eu}}", 1)
	root := testutil.WriteFiles(t, t.TempDir(), files)
	for _, c := range []struct{ name, file, fails string }{
		{"apps", "clusters/prod/apps-inline.yaml", ""},
		{"plain", "clusters/prod/plain.yaml", ""},
		// Unset ${CLUSTER_NAME}-${REGION} leaves "value: -", which is no
		// longer YAML: flux build fails, and so must the gate.
		{"defaults", "clusters/prod/defaults.yaml", "block sequence entries are not allowed"},
		{"defaults-set", "clusters/prod/defaults-set.yaml", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ks, err := yaml.Parse(files[c.file])
			if err != nil {
				t.Fatal(err)
			}
			ours, err := Render(ks, root, nil)
			r := testutil.Run(t, root, "", nil, flux, "build", "kustomization", c.name,
				"--path", filepath.Join(root, filepath.FromSlash(str(ks, "spec", "path"))),
				"--kustomization-file", filepath.Join(root, filepath.FromSlash(c.file)), "--dry-run")
			if c.fails != "" {
				// Both refuse it, for the same reason.
				if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, c.fails) || err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Fatalf("want both to fail with %q\n gate: %v\n flux build: exit %d %s%s", c.fails, err, r.Code, r.Stdout, r.Stderr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Code != 0 {
				t.Fatalf("flux build: exit %d\n%s", r.Code, r.Stderr)
			}
			theirs, err := kio.FromBytes([]byte(r.Stdout))
			if err != nil {
				t.Fatalf("parsing flux build's output: %v\n%s", err, r.Stdout)
			}
			a, b := canonical(t, ours, false), canonical(t, theirs, true)
			if len(a) != len(b) {
				t.Fatalf("%d objects, flux build %d:\n%s\n--- flux build\n%s", len(a), len(b), strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Errorf("object %d differs:\n gate: %s\n flux: %s", i, a[i], b[i])
				}
			}
		})
	}
}

// canonical returns the objects as sorted-key JSON, sorted; owner drops
// the owner labels flux build adds.
func canonical(t *testing.T, objs []*yaml.RNode, owner bool) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		o = o.Copy()
		if owner {
			for _, l := range []string{"kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace"} {
				labels := o.GetLabels()
				delete(labels, l)
				if err := o.SetLabels(labels); err != nil {
					t.Fatal(err)
				}
			}
			if len(o.GetLabels()) == 0 {
				_ = o.PipeE(yaml.Lookup("metadata"), yaml.Clear("labels"))
			}
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	sort.Strings(out)
	return out
}
