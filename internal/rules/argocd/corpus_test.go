package argocd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

func corpusFile(t *testing.T, path string) []*yaml.RNode {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.Corpus(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return ruletest.Parse(t, string(data))
}

// Real ignoreDifferences from Argo CD's reference manifests and from
// cnoe-io/stacks: what fires and what must not.
func TestIgnoreDifferencesCorpus(t *testing.T) {
	cases := []struct {
		file string
		want []string // field paths
	}{
		// apps/Deployment /spec/replicas passes; `.data["config.yaml"]` of every
		// ConfigMap does not; */* named my-deployment trusting
		// kube-controller-manager passes.
		{"argoproj__argo-cd/docs/operator-manual/application.yaml", []string{"spec.ignoreDifferences[1].jqPathExpressions[0]"}},
		// caBundle pointers and jq, kube-controller-manager, .all replicas.
		{"argoproj__argo-cd/docs/operator-manual/argocd-cm.yaml", nil},
		// /webhooks of every MutatingWebhookConfiguration: the whole list, not
		// just the injected caBundle.
		{"cnoe-io__stacks/caipe/base/vault.yaml", []string{"spec.ignoreDifferences[0].jsonPointers[0]"}},
		{"cnoe-io__stacks/istio-ambient/istio-ambient/istio-ambient.yaml", []string{"spec.ignoreDifferences[0].jsonPointers[0]"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got := check(t, "argocd-ignore-differences", corpusFile(t, c.file), nil, nil)
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), messages(got))
			}
			for i, w := range c.want {
				if got[i].Field.Path != w {
					t.Errorf("finding %d at %s, want %s", i, got[i].Field.Path, w)
				}
			}
		})
	}
}

// Without rendered sources, no Application or ApplicationSet of the corpus
// passes silently: each is reported as not rendered, or deploys nothing.
func TestEveryCorpusApplicationIsReported(t *testing.T) {
	root := testutil.Corpus(t)
	seen := 0
	for _, repo := range []string{"argoproj__argo-cd", "cnoe-io__stacks", "gitops-bridge-dev__gitops-bridge"} {
		_ = filepath.WalkDir(filepath.Join(root, repo), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.Contains(path, "/crds/") {
				return err
			}
			data, _ := os.ReadFile(path)
			nodes, err := yaml.Parse(string(data))
			if err != nil || nodes == nil || !strings.HasPrefix(nodes.GetApiVersion(), "argoproj.io/") {
				return nil
			}
			all := parseLenient(string(data))
			for _, r := range all {
				if r.GetKind() != "Application" && r.GetKind() != "ApplicationSet" {
					continue
				}
				seen++
				got := check(t, "argocd-source-not-rendered", []*yaml.RNode{r}, nil, nil)
				if len(got) == 0 && hasManifestSource(r) {
					t.Errorf("%s: %s/%s passed silently", path, r.GetKind(), r.GetName())
				}
				_ = check(t, "argocd-ignore-differences", []*yaml.RNode{r}, nil, nil)
			}
			return nil
		})
	}
	if seen < 10 {
		t.Fatalf("only %d Applications/ApplicationSets found in the corpus", seen)
	}
}

func parseLenient(text string) []*yaml.RNode {
	var out []*yaml.RNode
	for _, doc := range strings.Split(text, "\n---") {
		if n, err := yaml.Parse(doc); err == nil && n != nil {
			out = append(out, n)
		}
	}
	return out
}

func hasManifestSource(r *yaml.RNode) bool {
	if r.GetKind() == "ApplicationSet" {
		return true
	}
	srcs := argo.Sources(r)
	if len(srcs) == 0 {
		return true
	}
	for _, s := range srcs {
		if s.Manifests() {
			return true
		}
	}
	return false
}
