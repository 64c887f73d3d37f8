package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EFilesDirWithABadFile: check -f DIR where one file is no
// Kubernetes manifest (a values file, malformed YAML) is no verdict on it
// (exit 3, the file named), and the other files are still judged and
// reported, in every format: a user fixing a pull request sees every
// finding at once, not one error and then, on the next run, the rest.
// With -R and with the file named alone beside a good one, the same.
func TestE2EFilesDirWithABadFile(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: nginx:1.25}]}\n"
	for _, c := range []struct {
		name, bad, content string
		args               []string
	}{
		{"no apiVersion and kind", "d/values.yaml", "replicas: 3\nimage: {tag: latest}\n", []string{"-f", "d"}},
		{"malformed YAML", "d/broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", []string{"-f", "d"}},
		{"malformed YAML, -R", "d/sub/broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", []string{"-R", "-f", "d"}},
		{"files named", "d/values.yaml", "replicas: 3\n", []string{"-f", "d/values.yaml", "-f", "d/pod.yaml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{"d/pod.yaml": pod, c.bad: c.content})
			args := append([]string{"check"}, c.args...)
			r := runGate(t, dir, args...)
			if r.Code != 3 || !strings.Contains(r.Stdout, c.bad) || !strings.Contains(r.Stdout, "NO VERDICT") {
				t.Fatalf("exit %d, want 3 naming %s\n%s%s", r.Code, c.bad, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "ERROR [image-digest]") || !strings.Contains(r.Stdout, "d/pod.yaml") {
				t.Errorf("text: the good file's finding is not reported\n%s", r.Stdout)
			}
			r = runGate(t, dir, append(args, "-o", "json")...)
			var doc struct {
				Summary  struct{ Verdict string }
				Results  []struct{ Rule string }
				Failures []string
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("%v\n%s", err, r.Stdout)
			}
			if r.Code != 3 || doc.Summary.Verdict != "no-verdict" || len(doc.Failures) != 1 || !strings.Contains(doc.Failures[0], c.bad) {
				t.Errorf("json: exit %d, verdict %q, failures %q; want 3, no-verdict and one failure naming %s", r.Code, doc.Summary.Verdict, doc.Failures, c.bad)
			}
			if len(doc.Results) != 1 || doc.Results[0].Rule != "image-digest" {
				t.Errorf("json: results %+v, want the image-digest finding", doc.Results)
			}
			for _, format := range []string{"sarif", "github"} {
				r = runGate(t, dir, append(args, "-o", format)...)
				if r.Code != 3 || !strings.Contains(r.Stdout, map[string]string{"sarif": `"ruleId": "image-digest"`, "github": "title=image-digest"}[format]) || !strings.Contains(r.Stdout, c.bad) {
					t.Errorf("%s: exit %d, want 3 with the finding and %s named\n%s", format, r.Code, c.bad, r.Stdout)
				}
			}
		})
	}
}
