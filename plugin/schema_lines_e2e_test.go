package plugin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestE2ESchemaFindingsHaveLocations: every schema and api-validation
// finding of -k and -f has a SARIF location with the file and line of the
// field it names; for -k the line is in the base the overlay renders, or
// in the overlay's patch when the patch set the value.
func TestE2ESchemaFindingsHaveLocations(t *testing.T) {
	const dir = "internal/rules/schema/testdata/lines/"
	const base = dir + "base/deploy.yaml"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-k", dir + "overlay"}, []string{
			"api-validation " + base + ":25",
			"api-validation " + base + ":30",
			"api-validation " + dir + "overlay/patch.yaml:11",
			"schema " + base + ":13",
		}},
		{[]string{"-f", base}, []string{
			"api-validation " + base + ":25",
			"api-validation " + base + ":30",
			"schema " + base + ":13",
		}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			r := gate(t, "", append([]string{"check", "-o", "sarif"}, tc.args...)...)
			if r.Code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			var doc struct {
				Runs []struct {
					Results []struct {
						RuleID    string
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }
								Region           struct{ StartLine int }
							}
						}
					}
				}
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Runs) != 1 {
				t.Fatalf("SARIF: %v\n%s", err, r.Stdout)
			}
			var got []string
			for _, res := range doc.Runs[0].Results {
				if res.RuleID != "schema" && res.RuleID != "api-validation" {
					continue // image-digest: the test image has a tag
				}
				if len(res.Locations) != 1 {
					t.Fatalf("%s: %d locations", res.RuleID, len(res.Locations))
				}
				p := res.Locations[0].PhysicalLocation
				got = append(got, fmt.Sprintf("%s %s:%d", res.RuleID, p.ArtifactLocation.URI, p.Region.StartLine))
			}
			slices.Sort(tc.want)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// TestE2EWebhookConfigurationsValidated: the built kubectl-gate validates a
// webhook configuration as the API server does (its main links
// internal/apivalidation/webhooks), with the line of the field.
func TestE2EWebhookConfigurationsValidated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "webhook.yaml")
	doc := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: shop-defaults}
webhooks:
- name: defaults.shop.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 45
  clientConfig: {service: {name: shop-defaults, namespace: shop, path: /mutate}, caBundle: ""}
  rules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r := gate(t, "", "check", "-f", file)
	// The object's header names the file, its finding the line.
	head := "MutatingWebhookConfiguration/shop-defaults [" + file + "]\n"
	want := "MutatingWebhookConfiguration/shop-defaults\n  ERROR [api-validation] webhooks[0].timeoutSeconds: Invalid value: 45: the timeout value must be between 1 and 30 seconds [line 8]"
	if r.Code != 1 || !strings.Contains(r.Stdout, head) || !says(r.Stdout, want) {
		t.Errorf("exit %d, want 1 and %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
}

// versionsTemplate is a chart template that writes a label value the API
// server refuses only when rendered for a cluster before 1.30.
const versionsTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: versions
  namespace: default
  labels:
    rendered-for: {{ if semverCompare "<1.30-0" .Capabilities.KubeVersion.Version }}"old cluster"{{ else }}current{{ end }}
data: {kube: {{ .Capabilities.KubeVersion.Version | quote }}}
`

// TestE2EKubernetesVersions: every minor from 1.28 to 1.37 is embedded; an
// unknown one is a usage error naming the range; a chart is rendered for
// the version it is checked against unless --kube-version says otherwise.
func TestE2EKubernetesVersions(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "chart")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: versions\nversion: 0.1.0\n",
		// Before 1.30 the chart writes a label value the API server
		// refuses: only a render for 1.29 fails.
		"templates/cm.yaml": versionsTemplate,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(chart, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--kubernetes-version", "1.29"}, 1, `metadata.labels: Invalid value: "old cluster"`},
		{[]string{"--kubernetes-version", "1.29", "--kube-version", "v1.31.0"}, 0, "PASS"},
		{[]string{"--kubernetes-version", "1.28"}, 1, `metadata.labels: Invalid value: "old cluster"`},
		{nil, 0, "PASS"},
		{[]string{"--kubernetes-version", "1.27"}, 2, "supported: 1.28 to 1.37"},
	} {
		r := gate(t, "", append([]string{"check", "--chart", chart}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stdout+r.Stderr, tc.says) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", tc.args, r.Code, tc.code, tc.says, r.Stdout, r.Stderr)
		}
	}
	for minor := 28; minor <= 37; minor++ {
		v := fmt.Sprintf("1.%d", minor)
		r := gate(t, "", "check", "-f", "examples/base/web.yaml", "--kubernetes-version", v)
		if r.Code != 0 && r.Code != 1 {
			t.Errorf("--kubernetes-version %s: exit %d\n%s%s", v, r.Code, r.Stdout, r.Stderr)
		}
	}
}
