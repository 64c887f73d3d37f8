package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegressionsAccepted: real objects the API server accepts, which the
// check once rejected (testdata/regressions/PROVENANCE.md): an Argo CD
// hook Job named only by generateName ("name or generateName is
// required"), and "" in byte fields (a Secret's data, a webhook's caBundle).
func TestRegressionsAccepted(t *testing.T) {
	for _, file := range []string{"argocd-hook-job-generatename.yaml", "empty-bytes.yaml"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "regressions", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range validate(t, Options{}, string(raw)) {
			t.Errorf("%s: %s", file, r)
		}
	}
}

// TestRegressionsStillRejected: the fixes are narrow. A generateName that is
// not a valid prefix, a byte field that is not base64 and an object with
// neither name nor generateName are still rejected.
func TestRegressionsStillRejected(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: Migrate_, namespace: default}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n",
			"metadata.generateName: Invalid value"},
		{"apiVersion: batch/v1\nkind: Job\nmetadata: {namespace: default}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n",
			"name or generateName is required"},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\ndata: {password: '%%% not base64'}\n",
			"data.password"},
	} {
		var got []string
		for _, r := range validate(t, Options{}, tc.doc) {
			got = append(got, r.String())
		}
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("want a result containing %q, got %q", tc.want, got)
		}
	}
}
