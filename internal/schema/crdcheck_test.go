package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	// The binaries' CRD validation (apivalidation.RegisterCRD).
	_ "github.com/kubectl-gate/kubectl-gate/internal/apivalidation/webhooks"
)

// brokenRuleCRD is certCRDAndCert's CRD with a rule that does not compile.
func brokenRuleCRD() string {
	crd, _, _ := strings.Cut(certCRDAndCert, "---")
	return strings.Replace(crd, `rule: "!has(self.min) || !has(self.max) || self.min <= self.max"`, `rule: "self.min <= "`, 1)
}

// overBudgetCRD has a rule whose estimated cost the API server refuses: a
// triple loop over an unbounded list of unbounded strings.
func overBudgetCRD() string {
	crd, _, _ := strings.Cut(certCRDAndCert, "---")
	crd = strings.Replace(crd, `rule: "!has(self.min) || !has(self.max) || self.min <= self.max"`, `rule: "self.hosts.all(a, self.hosts.all(b, self.hosts.all(c, a.matches(b + c))))"`, 1)
	return strings.Replace(crd, "              email: {type: string, format: email}\n", "              email: {type: string, format: email}\n              hosts: {type: array, items: {type: string}}\n", 1)
}

func TestRenderCRDTheAPIServerRefuses(t *testing.T) {
	good, _, _ := strings.Cut(certCRDAndCert, "---")
	for _, tc := range []struct{ name, doc, want string }{
		{"a rule that compiles", good, ""},
		{"a rule that does not compile", brokenRuleCRD(), "x-kubernetes-validations[0].rule"},
		{"a rule over the CEL cost budget", overBudgetCRD(), "exceeds budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range validate(t, Options{}, tc.doc) {
				got = append(got, r.String())
				if r.Rule != RuleAPIValidation {
					t.Errorf("unexpected result %s", r)
				}
			}
			all := strings.Join(got, "\n")
			if tc.want == "" && all != "" {
				t.Fatalf("the API server accepts this CRD; got\n%s", all)
			}
			if !strings.Contains(all, tc.want) {
				t.Fatalf("want an api-validation result with %q, got\n%s", tc.want, all)
			}
		})
	}
}

func TestLoadCRDFilesRefusesWhatTheAPIServerRefuses(t *testing.T) {
	dir := t.TempDir()
	good, _, _ := strings.Cut(certCRDAndCert, "---")
	for name, doc := range map[string]string{"good.yaml": good, "crds/broken.yaml": brokenRuleCRD(), "budget.yaml": overBudgetCRD()} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644))
	}
	if crds, err := LoadCRDFiles([]string{filepath.Join(dir, "good.yaml")}); err != nil || len(crds) != 1 {
		t.Fatalf("good CRD: %d CRDs, %v", len(crds), err)
	}
	for file, want := range map[string]string{"crds": "x-kubernetes-validations[0].rule: Invalid value", "budget.yaml": "exceeds budget"} {
		_, err := LoadCRDFiles([]string{filepath.Join(dir, file)})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `CustomResourceDefinition "widgets.example.com": the API server refuses it`) {
			t.Errorf("%s: want the API server's refusal (%q), got %v", file, want, err)
		}
		if err != nil && file == "crds" && !strings.Contains(err.Error(), filepath.Join("crds", "broken.yaml")+": ") {
			t.Errorf("the error does not name the file: %v", err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
