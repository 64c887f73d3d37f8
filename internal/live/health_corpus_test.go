package live_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/live"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// healthKinds are the kinds whose Argo CD health fixtures live-health is
// held to (the README's live-health row names them).
var healthKinds = []string{"argoproj.io/Rollout", "cert-manager.io/Certificate", "external-secrets.io/ExternalSecret"}

// deliberate lists the fixtures Argo CD calls Progressing on which
// live-health fires anyway, and why. Every other fixture must agree:
// Degraded ⇔ live-health fires.
var deliberate = map[string]string{
	"argoproj.io/Rollout/testdata/newRolloutWithoutStatus.yaml":                     "no status: no controller has reconciled it",
	"argoproj.io/Rollout/testdata/progressing_newGeneration.yaml":                   "observedGeneration < generation",
	"argoproj.io/Rollout/testdata/progressing_newWorkloadGeneration.yaml":           "workloadRef change not observed",
	"argoproj.io/Rollout/testdata/bluegreen/progressing_waitingUntilAvailable.yaml": "Available=False",
	"argoproj.io/Rollout/testdata/canary/progressing_noSteps.yaml":                  "Available=False",
	"argoproj.io/Rollout/testdata/canary/progressing_setWeightStep.yaml":            "Available=False",
	"cert-manager.io/Certificate/testdata/progressing_noStatus.yaml":                "no status: no controller has reconciled it",
	"cert-manager.io/Certificate/testdata/progressing_issuing.yaml":                 "Ready=False: the Secret does not exist yet",
	"cert-manager.io/Certificate/testdata/progressing_issuing_last.yaml":            "Ready=False: the Secret does not exist yet",
	"external-secrets.io/ExternalSecret/testdata/progressing.yaml":                  "no status: no controller has reconciled it",
}

type healthCase struct {
	HealthStatus struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"healthStatus"`
	InputPath string `json:"inputPath"`
}

func TestHealthMatchesArgoCDFixtures(t *testing.T) {
	root := filepath.Join(testutil.Corpus(t), "argoproj__argo-cd", "resource_customizations")
	var rows []string
	for _, kind := range healthKinds {
		dir := filepath.Join(root, filepath.FromSlash(kind))
		for _, c := range readHealthTests(t, dir) {
			id := kind + "/" + c.InputPath
			obj := readObject(t, filepath.Join(dir, c.InputPath))
			problems := live.Health(obj)
			fired := len(problems) > 0
			argo := c.HealthStatus.Status
			why, isDeliberate := deliberate[id]
			want := argo == "Degraded" || isDeliberate
			rows = append(rows, fmt.Sprintf("%-80s %-12s %-6v %s", id, argo, fired, describe(problems, why)))
			if fired != want {
				t.Errorf("%s: Argo CD says %s (%q), live-health fired=%v, want %v: %v", id, argo, c.HealthStatus.Message, fired, want, problems)
			}
			if isDeliberate && argo != "Progressing" {
				t.Errorf("%s: listed as a deliberate difference but Argo CD says %s, not Progressing", id, argo)
			}
		}
	}
	sort.Strings(rows)
	t.Logf("live-health vs Argo CD health fixtures (%d):\n%-80s %-12s %-6s %s\n%s", len(rows), "fixture", "argo", "fires", "why", strings.Join(rows, "\n"))
}

func describe(ps []live.Problem, deliberate string) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.Path)
	}
	s := strings.Join(parts, ", ")
	if deliberate != "" {
		s += "  [deliberate: " + deliberate + "]"
	}
	return s
}

func readHealthTests(t *testing.T, dir string) []healthCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []healthCase `json:"tests"`
	}
	if err := sigsyaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parsing %s/health_test.yaml: %v", dir, err)
	}
	return doc.Tests
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := sigsyaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}
