package plugin_test

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
)

// protect puts HTTP basic auth for user:password in front of a test registry.
func protect(reg *testutil.Registry, user, password string) {
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			// A registry that echoes what it was sent must not make the
			// plugin print it.
			fmt.Fprintf(w, `{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials %s"}]}`, r.Header.Get("Authorization"))
			return
		}
		next.ServeHTTP(w, r)
	}
}

// deployment renders a Deployment in namespace shop; podExtra is added to its
// pod spec (serviceAccountName, imagePullSecrets).
func deployment(name, image, podExtra string) string {
	return fmt.Sprintf("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: shop}\nspec:\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n%s      containers:\n      - {name: app, image: %q}\n",
		name, name, name, podExtra, image)
}

// emptyDockerConfig keeps the machine's own docker config out of a test.
func emptyDockerConfig(t *testing.T) []string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.json"), "{}")
	return []string{"DOCKER_CONFIG=" + dir, "KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig")}
}

// TestE2EPullSecretsFromCluster runs the built plugin against a real
// kube-apiserver holding the pull secrets and two real registries that
// demand them: one reached through a ServiceAccount's imagePullSecrets
// (kubernetes.io/dockerconfigjson), one through a pod spec's
// (kubernetes.io/dockercfg).
func TestE2EPullSecretsFromCluster(t *testing.T) {
	c := cluster.Start(t)
	const passA, passB = "sa-Pa55word-4711", "pod-Pa55word-0815"
	regA, regB := testutil.StartRegistry(t), testutil.StartRegistry(t)
	digestA := regA.PushImage(t, "shop/web:1.0")
	digestB := regB.PushImage(t, "shop/api:2.0")
	protect(regA, "sa-user", passA)
	protect(regB, "pod-user", passB)

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	dockerconfigjson := fmt.Sprintf(`{"auths":{%q:{"username":"sa-user","password":%q}}}`, regA.Host, passA)
	dockercfg := fmt.Sprintf(`{%q:{"auth":%q}}`, regB.Host, b64("pod-user:"+passB))
	c.Apply(t, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Secret
metadata: {name: regcred-a, namespace: shop}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: %s}
---
apiVersion: v1
kind: Secret
metadata: {name: regcred-b, namespace: shop}
type: kubernetes.io/dockercfg
data: {.dockercfg: %s}
---
apiVersion: v1
kind: Secret
metadata: {name: opaque, namespace: shop}
type: Opaque
data: {token: %s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: shop}
imagePullSecrets: [{name: regcred-a}]
`, b64(dockerconfigjson), b64(dockercfg), b64(passA)))

	webImage, apiImage := regA.Host+"/shop/web:1.0", regB.Host+"/shop/api:2.0"
	render := deployment("web", webImage, "      serviceAccountName: deployer\n") +
		deployment("api", apiImage, "      imagePullSecrets: [{name: regcred-b}]\n")
	env := emptyDockerConfig(t)
	bin := testutil.Bin(t, "kubectl-gate")
	pin := func(t *testing.T, stdin string, args ...string) testutil.Result {
		t.Helper()
		args = append([]string{"pin", "-f", "-", "--insecure-registry", regA.Host, "--insecure-registry", regB.Host, "--timeout", "20s"}, args...)
		r := testutil.Run(t, testutil.Root(t), stdin, env, bin, args...)
		all := r.Stdout + r.Stderr
		for _, secret := range []string{passA, passB, b64("sa-user:" + passA), b64("pod-user:" + passB), b64(dockerconfigjson), b64(dockercfg)} {
			if strings.Contains(all, secret) {
				t.Fatalf("a credential leaked into the output of %v:\n%s", args, all)
			}
		}
		return r
	}
	withCluster := []string{"--pull-secrets-from", cluster.ContextName, "--kubeconfig", c.Kubeconfig}

	t.Run("pinned with the cluster's pull secrets", func(t *testing.T) {
		for _, out := range []string{"text", "json"} {
			r := pin(t, render, append(withCluster, "-o", out)...)
			if r.Code != 0 {
				t.Fatalf("-o %s: exit %d, want 0\nstderr:\n%s", out, r.Code, r.Stderr)
			}
			for _, want := range []string{webImage + "@" + digestA, apiImage + "@" + digestB} {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("-o %s: %s is not in the pinned render:\n%s", out, want, r.Stdout)
				}
			}
		}
	})
	t.Run("without the flag the registries answer 401", func(t *testing.T) {
		r := pin(t, render, "-o", "json")
		if r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, `"rule": "image-resolve"`) || !strings.Contains(r.Stderr, "401") {
			t.Fatalf("exit %d, want 3 with a 401 image-resolve finding and no stdout\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("pod imagePullSecrets replace the ServiceAccount's", func(t *testing.T) {
		// As the ServiceAccount admission plugin does: a pod that lists its own
		// pull secrets does not get its ServiceAccount's.
		r := pin(t, deployment("web", webImage, "      serviceAccountName: deployer\n      imagePullSecrets: [{name: regcred-b}]\n"), withCluster...)
		if r.Code != 3 || r.Stdout != "" {
			t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("a ServiceAccount declared in the render", func(t *testing.T) {
		sa := "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: new-sa, namespace: shop}\nimagePullSecrets: [{name: regcred-a}]\n"
		r := pin(t, sa+deployment("web", webImage, "      serviceAccountName: new-sa\n"), withCluster...)
		if r.Code != 0 || !strings.Contains(r.Stdout, webImage+"@"+digestA) {
			t.Fatalf("exit %d, want 0 and pinned\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	for _, tc := range []struct{ name, podExtra, says string }{
		{"a missing Secret", "      imagePullSecrets: [{name: nope}]\n", "--pull-secrets-from gate-test: Secret shop/nope not found"},
		{"a missing ServiceAccount", "      serviceAccountName: ghost\n", "ServiceAccount shop/ghost not found"},
		{"a Secret of the wrong type", "      imagePullSecrets: [{name: opaque}]\n", `Secret shop/opaque: type "Opaque" is not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg`},
	} {
		t.Run(tc.name+" is no verdict", func(t *testing.T) {
			r := pin(t, deployment("web", webImage, tc.podExtra), withCluster...)
			if r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, tc.says) {
				t.Fatalf("exit %d, want 3 saying %q\nstdout:\n%s\nstderr:\n%s", r.Code, tc.says, r.Stdout, r.Stderr)
			}
		})
	}
	t.Run("check --digest verify and selftest use them too", func(t *testing.T) {
		pinned := deployment("web", webImage+"@"+digestA, "      serviceAccountName: deployer\n")
		for _, cmd := range [][]string{{"check", "--digest", "verify"}, {"selftest", "--digest", "verify"}} {
			args := append(append(append([]string{}, cmd...), "-f", "-", "--insecure-registry", regA.Host), withCluster...)
			r := testutil.Run(t, testutil.Root(t), pinned, env, bin, args...)
			if r.Code != 0 {
				t.Errorf("%v: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", cmd, r.Code, r.Stdout, r.Stderr)
			}
			if r := testutil.Run(t, testutil.Root(t), pinned, env, bin, args[:len(args)-len(withCluster)]...); r.Code != 3 {
				t.Errorf("%v without --pull-secrets-from: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", cmd, r.Code, r.Stdout, r.Stderr)
			}
		}
	})
}

// TestE2EPullSecretsFailClosed: a cluster that cannot be read is no verdict
// (exit 3) naming what failed, and the cluster is never asked without the
// flag.
func TestE2EPullSecretsFailClosed(t *testing.T) {
	reg := testutil.StartRegistry(t)
	reg.PushImage(t, "shop/web:1.0")
	render := deployment("web", reg.Host+"/shop/web:1.0", "")
	env := emptyDockerConfig(t)
	bin := testutil.Bin(t, "kubectl-gate")
	kubeconfig := func(server string) string {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		write(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: not-a-secret}}]
contexts: [{name: gate-test, context: {cluster: c, user: u, namespace: shop}}]
current-context: gate-test
`, server))
		return path
	}
	refused := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "https://" + l.Addr().String()
	}()
	// An API server that denies every request, as RBAC would.
	forbidden := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,`+
			`"message":"serviceaccounts \"default\" is forbidden: User \"ci\" cannot get resource \"serviceaccounts\" in the namespace \"shop\""}`)
	}))
	t.Cleanup(forbidden.Close)

	for _, tc := range []struct {
		name       string
		kubeconfig string
		context    string
		says       []string
	}{
		{"unreachable cluster", kubeconfig(refused), "gate-test", []string{"--pull-secrets-from gate-test: reading ServiceAccount shop/default", "connection refused"}},
		{"RBAC denial", kubeconfig(forbidden.URL), "gate-test", []string{"--pull-secrets-from gate-test: reading ServiceAccount shop/default", "forbidden"}},
		{"unknown context", kubeconfig(refused), "prod", []string{"--pull-secrets-from prod: loading the kubeconfig", "prod"}},
		{"missing kubeconfig", filepath.Join(t.TempDir(), "absent"), "gate-test", []string{"--pull-secrets-from gate-test: loading the kubeconfig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := testutil.Run(t, testutil.Root(t), render, env, bin, "pin", "-f", "-", "--insecure-registry", reg.Host,
				"--pull-secrets-from", tc.context, "--kubeconfig", tc.kubeconfig)
			if r.Code != 3 || r.Stdout != "" {
				t.Fatalf("exit %d, want 3 and no stdout\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, r.Stderr)
				}
			}
			if strings.Contains(r.Stderr, "not-a-secret") {
				t.Errorf("the kubeconfig token leaked:\n%s", r.Stderr)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
	t.Run("--kubeconfig alone is a usage error", func(t *testing.T) {
		r := testutil.Run(t, testutil.Root(t), render, env, bin, "pin", "-f", "-", "--insecure-registry", reg.Host, "--kubeconfig", kubeconfig(refused))
		if r.Code != 2 || !strings.Contains(r.Stderr, "--pull-secrets-from") {
			t.Fatalf("exit %d, want 2\nstderr:\n%s", r.Code, r.Stderr)
		}
	})
	t.Run("without the flag the cluster is never asked", func(t *testing.T) {
		r := testutil.Run(t, testutil.Root(t), render, append(env, "KUBECONFIG="+kubeconfig(refused)), bin, "pin", "-f", "-", "--insecure-registry", reg.Host)
		if r.Code != 0 {
			t.Fatalf("exit %d, want 0\nstderr:\n%s", r.Code, r.Stderr)
		}
	})
}
