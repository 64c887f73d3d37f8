package pullsecrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/pullsecrets"
)

const render = `apiVersion: v1
kind: ServiceAccount
metadata: {name: builder, namespace: shop}
imagePullSecrets: [{name: ghcr}, {name: ghcr}, {name: quay}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      imagePullSecrets: [{name: web-pull}, {name: ghcr}]
      containers: [{name: web, image: ghcr.io/shop/web:1}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: builder
          containers: [{name: r, image: ghcr.io/shop/report:1}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: shop}
spec:
  template:
    spec:
      serviceAccount: legacy
      containers: [{name: w, image: ghcr.io/shop/worker:1}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker-2, namespace: shop}
spec:
  template:
    spec:
      serviceAccount: legacy
      containers: [{name: w, image: ghcr.io/shop/worker:1}]
---
apiVersion: example.com/v1
kind: Runner
metadata: {name: runner, namespace: ci}
spec:
  pod:
    containers: [{name: r, image: ghcr.io/shop/runner:1}]
`

// TestPodAuths: what each pod spec pulls with, as the ServiceAccount
// admission plugin decides it — pod-level secrets, else the (deprecated
// alias of the) ServiceAccount, else "default" — once per distinct
// combination, custom kinds through the configured pod spec paths, and the
// render's own ServiceAccounts with their secrets.
func TestPodAuths(t *testing.T) {
	pods, sas := pullsecrets.PodAuths(parseYAML(t, render), []images.PodSpecPath{{Kind: "Runner", Path: "spec.pod"}})
	want := []pullsecrets.PodAuth{
		{Namespace: "shop", ServiceAccount: "default", PullSecrets: "web-pull,ghcr"},
		{Namespace: "", ServiceAccount: "builder"},
		{Namespace: "shop", ServiceAccount: "legacy"},
		{Namespace: "ci", ServiceAccount: "default"},
	}
	if len(pods) != len(want) {
		t.Fatalf("pods = %+v, want %+v", pods, want)
	}
	for i := range want {
		if pods[i] != want[i] {
			t.Errorf("pod %d = %+v, want %+v", i, pods[i], want[i])
		}
	}
	if got := strings.Join(sas["shop/builder"], ","); got != "ghcr,quay" || len(sas) != 1 {
		t.Errorf("render ServiceAccounts = %v", sas)
	}
}

// TestSecretKeychain: only docker config Secrets with data are taken, and
// a broken one is named without quoting its bytes.
func TestSecretKeychain(t *testing.T) {
	good := &corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths":{"ghcr.io":{"username":"u","password":"p"}}}`)}}
	if _, err := pullsecrets.SecretKeychain(good); err != nil {
		t.Errorf("a valid dockerconfigjson Secret: %v", err)
	}
	cases := map[string]struct {
		s    *corev1.Secret
		says string
	}{
		"opaque":  {&corev1.Secret{Type: corev1.SecretTypeOpaque}, `type "Opaque" is not`},
		"no data": {&corev1.Secret{Type: corev1.SecretTypeDockercfg}, "no .dockercfg data"},
		"not a config": {&corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("hunter2-not-json")}},
			"is not a valid docker config"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := pullsecrets.SecretKeychain(c.s)
			if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err = %v, want one saying %q and no secret bytes", err, c.says)
			}
		})
	}
}

// TestReaderFailsClosedWithoutACluster: a context that cannot be loaded is
// an error naming the context, and is not retried per render; a render
// without pod specs never connects.
func TestReaderFailsClosedWithoutACluster(t *testing.T) {
	calls := 0
	r := pullsecrets.NewReader("prod", time.Second, func() (pullsecrets.Cluster, error) {
		calls++
		return pullsecrets.Cluster{}, errors.New("loading the kubeconfig: context \"prod\" does not exist")
	})
	if _, _, err := r.Keychain(context.Background(), parseYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), nil); err != nil || calls != 0 {
		t.Fatalf("no pod specs: err %v, %d connections", err, calls)
	}
	for range 2 {
		_, _, err := r.Keychain(context.Background(), parseYAML(t, render), nil)
		if err == nil || !strings.HasPrefix(err.Error(), "--pull-secrets-from prod: loading the kubeconfig") {
			t.Fatalf("err = %v", err)
		}
	}
	if calls != 1 {
		t.Errorf("%d connection attempts, want 1", calls)
	}
}

func parseYAML(t *testing.T, text string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
