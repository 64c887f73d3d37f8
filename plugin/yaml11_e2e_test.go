package plugin_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EYAML11AsKubectl: kubectl apply -f, and Argo CD's repo-server for
// a directory source, read YAML 1.1 (sigs.k8s.io/yaml): a plain on or yes
// is a boolean, which the API server refuses in a label or an env value.
// The gate read them as YAML 1.2 strings and passed; so did it a Helm
// chart's output, which helm install decodes alike. Quoted they are
// strings; a kustomize render reads them as YAML 1.2 strings and writes
// them quoted (`tier: "on"`, seen from kustomize build), so it passes.
func TestE2EYAML11AsKubectl(t *testing.T) {
	const dir = "internal/stream/testdata/yaml11/"
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"label on", []string{"-f", dir + "label-on.yaml"}, 1,
			"ERROR [schema] metadata.labels[tier]: Invalid value: null: json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type string [line 9]"},
		{"env value yes", []string{"-f", dir + "env-yes.yaml"}, 1,
			`ERROR [schema] spec.template.spec.containers[0].env[0].value: Invalid value: "boolean": spec.template.spec.containers[0].env[0].value in body must be of type string: "boolean" [line 20]`},
		{"from stdin", []string{"-f", "-"}, 1, `metadata.labels[tier]`},
		{"Argo CD directory source", []string{"-f", dir + "argocd/app.yaml", "--apps-root", ".", "--repo-url", "https://github.com/kubectl-gate/kubectl-gate.git"}, 1,
			"Deployment/web [" + dir + "argocd/manifests/deploy.yaml]\n  ERROR [schema] metadata.labels[tier]: Invalid value: null"},
		// helm install decodes a chart's output as kubectl does.
		{"Helm chart", []string{"--chart", "internal/helm/testdata/charts/yaml11"}, 1,
			"Deployment/release-name [internal/helm/testdata/charts/yaml11/templates/deploy.yaml]\n  ERROR [schema] metadata.labels[tier]: Invalid value: null"},
		{"quoted", []string{"-f", dir + "quoted.yaml"}, 0, "PASS: 1 resource(s)"},
		{"kustomize render", []string{"-k", dir + "kustomize"}, 0, "PASS: 1 resource(s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdin := ""
			if c.args[1] == "-" {
				stdin = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {tier: on}\n"
			}
			r := gate(t, stdin, append([]string{"check", "--no-color"}, c.args...)...)
			if r.Code != c.code || !strings.Contains(r.Stdout, c.want) {
				t.Errorf("exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, c.want, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestE2EYAML11KubectlAgrees: kubectl itself reads the fixtures so, with
// no cluster (annotate --local prints the object as it decoded it): the
// label on is a boolean it cannot decode, the env value yes is true, the
// quoted ones are strings.
func TestE2EYAML11KubectlAgrees(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	const dir = "internal/stream/testdata/yaml11/"
	for _, c := range []struct{ file, stdout, stderr string }{
		{"label-on.yaml", "", "cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"},
		{"env-yes.yaml", `"value": true`, ""},
		{"quoted.yaml", `"tier": "on"`, ""},
		{"quoted.yaml", `"value": "yes"`, ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := testutil.Run(t, testutil.Root(t), "", []string{"KUBECONFIG=" + os.DevNull}, kubectl,
				"annotate", "--local", "-f", dir+c.file, "checked=yes", "-o", "json")
			if !strings.Contains(r.Stdout, c.stdout) || !strings.Contains(r.Stderr, c.stderr) || (r.Code == 0) != (c.stderr == "") {
				t.Errorf("kubectl: exit %d, want %q on stdout, %q on stderr\nstdout:\n%s\nstderr:\n%s", r.Code, c.stdout, c.stderr, r.Stdout, r.Stderr)
			}
		})
	}
}
