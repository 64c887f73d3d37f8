package cmp_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/cmp"
	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// environ turns name=value pairs into a lookup and an environ list.
func environ(kv ...string) (func(string) (string, bool), []string) {
	m := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }, kv
}

// argoEnviron is what Argo CD v3.6 sets for an app shop-prod at a commit
// (reposerver/repository newEnv, getPluginEnvs; the parameters as
// ApplicationSourcePluginParameters.Environ writes them).
var argoEnviron = []string{
	"ARGOCD_APP_NAME=shop-prod", "ARGOCD_APP_NAMESPACE=shop", "ARGOCD_APP_PROJECT_NAME=default",
	"ARGOCD_APP_REVISION=4f3c2a1e9b8d7c6f5a4b3c2d1e0f9a8b7c6d5e4f", "ARGOCD_APP_REVISION_SHORT=4f3c2a1",
	"ARGOCD_APP_REVISION_SHORT_8=4f3c2a1e", "ARGOCD_APP_SOURCE_REPO_URL=https://git.example/shop.git",
	"ARGOCD_APP_SOURCE_PATH=charts/shop", "ARGOCD_APP_SOURCE_TARGET_REVISION=main",
	"KUBE_VERSION=1.35.2", "KUBE_API_VERSIONS=v1,apps/v1,argoproj.io/v1alpha1",
	`ARGOCD_APP_PARAMETERS=[{"name":"values-files","array":["values-prod.yaml","../../env/prod.yaml"]},{"name":"helm-parameters","map":{"image.tag":"1.4.2","hosts":"a.example,b.example"}},{"name":"values","string":"replicas: 3\n"}]`,
	"PARAM_VALUES_FILES_0=values-prod.yaml", "PARAM_VALUES_FILES_1=../../env/prod.yaml",
	"PARAM_HELM_PARAMETERS_IMAGE_TAG=1.4.2", "PARAM_HELM_PARAMETERS_HOSTS=a.example,b.example", "PARAM_VALUES=replicas: 3\n",
	"ARGOCD_ENV_GATE_FAIL_ON=warning", "ARGOCD_ENV_GATE_RULES=rollout-single-writer=error, image-digest=off", "ARGOCD_ENV_OTHER_TOOL=x",
}

func TestReadArgoEnvironment(t *testing.T) {
	e, err := cmp.Read(environ(argoEnviron...))
	if err != nil {
		t.Fatal(err)
	}
	if e.AppName != "shop-prod" || e.AppNamespace != "shop" || e.RevisionShort != "4f3c2a1" || len(e.APIVersions) != 3 {
		t.Errorf("env %+v", e)
	}
	if got := e.Prefix(); got != "shop-prod@4f3c2a1: " {
		t.Errorf("Prefix() = %q", got)
	}
	h, err := e.Helm()
	if err != nil {
		t.Fatal(err)
	}
	want := cmp.Helm{ReleaseName: "shop-prod", Namespace: "shop", ValueFiles: []string{"values-prod.yaml", "../../env/prod.yaml"},
		Values: "replicas: 3\n", Set: []string{`hosts=a.example\,b.example`, "image.tag=1.4.2"}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("Helm() = %+v\nwant      %+v", h, want)
	}
	spec, err := e.Settings.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if spec.FailOn != "warning" || spec.Rules["rollout-single-writer"] != "error" || spec.Rules["image-digest"] != "off" {
		t.Errorf("settings spec %+v", spec)
	}
	if fmt.Sprint(e.Settings.Names) != "[ARGOCD_ENV_GATE_FAIL_ON ARGOCD_ENV_GATE_RULES]" {
		t.Errorf("setting names %v", e.Settings.Names)
	}
}

// TestParamsFromEnviron: without ARGOCD_APP_PARAMETERS the PARAM_ variables
// give strings and arrays; maps cannot be read from them.
func TestParamsFromEnviron(t *testing.T) {
	e, err := cmp.Read(environ("ARGOCD_APP_NAME=argocd_shop", "PARAM_VALUES_FILES_1=b.yaml", "PARAM_VALUES_FILES_0=a.yaml", "PARAM_RELEASE_NAME=web"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Helm()
	if err != nil || h.ReleaseName != "web" || fmt.Sprint(h.ValueFiles) != "[a.yaml b.yaml]" {
		t.Errorf("Helm() = %+v, %v", h, err)
	}
	if e.ReleaseName() != "shop" {
		t.Errorf("ReleaseName of argocd_shop = %q, want shop", e.ReleaseName())
	}
	for _, bad := range [][]string{
		{"PARAM_HELM_PARAMETERS_IMAGE_TAG=1"},
		{"PARAM_VALUES_FILES_1=b.yaml"},
		{"PARAM_NOPE=1"},
	} {
		if _, err := cmp.Read(environ(append([]string{"ARGOCD_APP_NAME=shop"}, bad...)...)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestParseParametersRefuses(t *testing.T) {
	for _, tc := range []struct{ in, says string }{
		{`{"name":"values"}`, "not a JSON array"},
		{`[{"name":"values-file","array":["a"]}]`, `unknown parameter "values-file"`},
		{`[{"name":"values-files","string":"a.yaml"}]`, "takes a array, got string"},
		{`[{"name":"values","string":"a","array":[]}]`, "got string and array"},
		{`[{"name":"values"}]`, "got no value"},
		{`[{"name":"values","string":"a"},{"name":"values","string":"b"}]`, "given twice"},
		{`[{"name":"values","string":"a","extra":1}]`, "unknown field"},
		{`[] []`, "more than one JSON value"},
	} {
		_, err := cmp.ParseParameters([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.says)
		}
	}
	if ps, err := cmp.ParseParameters([]byte(`[{"name":"helm-parameters","map":{}},{"name":"values-files","array":[]}]`)); err != nil || ps[0].Map == nil || ps[1].Array == nil {
		t.Errorf("empty map and array: %+v, %v; want present but empty", ps, err)
	}
}

func TestSettingsRefused(t *testing.T) {
	for _, kv := range []string{"ARGOCD_ENV_GATE_FAIL_ON=never", "ARGOCD_ENV_GATE_EXPECT_RESOURCES=-1", "ARGOCD_ENV_GATE_RULES=image-digest",
		"ARGOCD_ENV_GATE_TIMEOUT=soon", "ARGOCD_ENV_GATE_DIGESTS=verify"} {
		if _, err := cmp.Read(environ("ARGOCD_APP_NAME=shop", kv)); err == nil {
			t.Errorf("%s: no error", kv)
		}
	}
	for _, kv := range []string{"ARGOCD_ENV_GATE_RULES=image-digestt=off", "ARGOCD_ENV_GATE_DIGEST=sometimes"} {
		e, err := cmp.Read(environ("ARGOCD_APP_NAME=shop", kv))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Settings.Spec(); err == nil || !strings.Contains(err.Error(), "ARGOCD_ENV_GATE_") {
			t.Errorf("%s: Spec() error %v, want one naming the variable", kv, err)
		}
	}
	e, _ := cmp.Read(environ("ARGOCD_APP_NAME=shop", "ARGOCD_ENV_GATE_TIMEOUT=40s"))
	if e.Settings.Timeout != 40*time.Second {
		t.Errorf("timeout %s", e.Settings.Timeout)
	}
}

func TestValuesFilesStayInTheRepository(t *testing.T) {
	for _, tc := range []struct {
		path, file string
		ok         bool
	}{
		{"charts/shop", "values.yaml", true},
		{"charts/shop", "../../env/prod.yaml", true},
		{"charts/shop", "../../../etc/passwd", false},
		{"charts/shop", "/etc/passwd", false},
		{"charts/shop", "https://evil.example/v.yaml", false},
		{".", "../x.yaml", false},
		{"", "x/../../x.yaml", false},
	} {
		b, _ := json.Marshal([]cmp.Param{{Name: "values-files", Array: []string{tc.file}}})
		e, err := cmp.Read(environ("ARGOCD_APP_NAME=shop", "ARGOCD_APP_SOURCE_PATH="+tc.path, "ARGOCD_APP_PARAMETERS="+string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Helm(); (err == nil) != tc.ok {
			t.Errorf("app at %q, values file %q: error %v, want ok=%v", tc.path, tc.file, err, tc.ok)
		}
	}
}

func TestSchemaTarget(t *testing.T) {
	embedded := schema.Versions()
	oldest, newest := embedded[0], embedded[len(embedded)-1]
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{oldest + ".2", oldest, ""},
		{"v" + newest + ".0-eks-1234", newest, ""},
		{"1.27.8", "", `KUBE_VERSION="1.27.8": the gate embeds the schemas of Kubernetes ` + oldest + " to " + newest + " only"},
		{"one", "", "is not a Kubernetes version"},
	} {
		e := &cmp.Env{KubeVersion: tc.in}
		got, err := e.SchemaTarget()
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("SchemaTarget(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
