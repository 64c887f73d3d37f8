package plugin_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// objects parses a YAML stream into its objects, in order.
func objects(t *testing.T, stream string) []map[string]any {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parsing the stream: %v\n%s", err, stream)
	}
	out := make([]map[string]any, 0, len(nodes))
	for _, n := range nodes {
		m, err := n.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// sameObjects fails unless two streams hold the same objects in the same
// order (formatting and comments aside).
func sameObjects(t *testing.T, what, got, want string) {
	t.Helper()
	g, w := objects(t, got), objects(t, want)
	if len(w) == 0 {
		t.Fatalf("%s: the reference render is empty", what)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: %d object(s), want %d equal to the reference in order\n--- got\n%s--- want\n%s", what, len(g), len(w), got, want)
	}
}

// TestE2ERender runs the built `kubectl gate render`: the render on stdout
// only on pass, as `kustomize build` prints it; nothing on stdout on a
// finding or at the deadline.
func TestE2ERender(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	gate := testutil.Bin(t, "kubectl-gate")
	bin := filepath.Dir(testutil.Bin(t, "gate-fn"))
	root := testutil.Root(t)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}

	r := testutil.Run(t, root, "", env, gate, "render", "-k", "examples/overlays/prod")
	if r.Code != 0 || !strings.Contains(r.Stderr, "PASS") {
		t.Fatalf("render prod: exit %d, want 0 with the report on stderr:\n%s", r.Code, r.Stderr)
	}
	want := testutil.Run(t, root, "", env, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "examples/overlays/prod")
	if want.Code != 0 {
		t.Fatalf("kustomize build: %s", want.Stderr)
	}
	sameObjects(t, "render -k examples/overlays/prod", r.Stdout, want.Stdout)

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-k", "examples/overlays/prod-retag"}, 1, "ERROR [image-digest]"},
		{[]string{"-k", "examples/overlays/prod", "--timeout", "1ms"}, 3, "--timeout 1ms exceeded"},
		{[]string{"-k", "examples/overlays/prod", "--apps-root", "."}, 2, "--apps-root"},
	} {
		r := testutil.Run(t, root, "", env, gate, append([]string{"render"}, tc.args...)...)
		if r.Code != tc.code || r.Stdout != "" || !strings.Contains(r.Stderr, tc.says) {
			t.Errorf("render %v: exit %d with %d bytes on stdout, want %d, nothing on stdout and %q on stderr:\n%s", tc.args, r.Code, len(r.Stdout), tc.code, tc.says, r.Stderr)
		}
	}
}

// cmpPlugin is the part of examples/argocd/cmp/plugin.yaml the sidecar runs.
type cmpPlugin struct {
	Spec struct {
		Generate struct {
			Command, Args []string
		}
	}
}

// sidecar runs the plugin's generate command as Argo CD's CMP server does
// (cmpserver/plugin runCommand): in the app's directory of a copy of the
// repository, with the sidecar's environment plus the app's, in its own
// process group, SIGTERM to the group at the deadline and SIGKILL 5 s later.
type sidecar struct {
	command []string
	repo    string   // the copy of the repository
	env     []string // the sidecar container's environment
	timeout time.Duration
}

// generated is what one generate run did.
type generated struct {
	code           int
	stdout, stderr string
	took, cpu      time.Duration
	maxRSSKiB      int64
}

func newSidecar(t *testing.T) *sidecar {
	t.Helper()
	root := testutil.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "examples", "argocd", "cmp", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p cmpPlugin
	if err := sigsyaml.Unmarshal(b, &p); err != nil || len(p.Spec.Generate.Command) == 0 {
		t.Fatalf("plugin.yaml has no generate command: %v", err)
	}
	// The sidecar's copy of the repository (the CMP server unpacks the
	// repository into a fresh work directory for every request).
	repo := t.TempDir()
	copyDir(t, filepath.Join(root, "examples"), filepath.Join(repo, "examples"))
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	return &sidecar{
		command: append(p.Spec.Generate.Command, p.Spec.Generate.Args...),
		repo:    repo,
		env:     []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()},
		// ARGOCD_EXEC_TIMEOUT's default; the repo-server gives up at 60 s.
		timeout: 90 * time.Second,
	}
}

// generate runs the command for app at path with Argo CD's environment.
func (s *sidecar) generate(t *testing.T, app, path string, extra ...string) generated {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.command[0], s.command[1:]...)
	cmd.Dir = filepath.Join(s.repo, filepath.FromSlash(path))
	cmd.Env = append(append(append([]string{}, s.env...),
		"ARGOCD_APP_NAME="+app, "ARGOCD_APP_NAMESPACE="+app, "ARGOCD_APP_PROJECT_NAME=default",
		"ARGOCD_APP_REVISION=4f3c2a1e9b8d7c6f5a4b3c2d1e0f9a8b7c6d5e4f", "ARGOCD_APP_REVISION_SHORT=4f3c2a1",
		"ARGOCD_APP_REVISION_SHORT_8=4f3c2a1e", "ARGOCD_APP_SOURCE_REPO_URL=https://github.com/kubectl-gate/kubectl-gate.git",
		"ARGOCD_APP_SOURCE_PATH="+path, "ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.35.2", "KUBE_API_VERSIONS=v1,apps/v1,batch/v1,policy/v1,networking.k8s.io/v1,argoproj.io/v1alpha1",
	), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	g := generated{stdout: out.String(), stderr: errb.String(), took: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		g.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("generate %s: %v", app, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		g.maxRSSKiB = ru.Maxrss
	}
	g.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	t.Logf("generate %s (%s): exit %d in %s (CPU %s), max RSS %d MiB", app, path, g.code, g.took.Round(time.Millisecond), g.cpu.Round(time.Millisecond), g.maxRSSKiB/1024)
	return g
}

// red checks a failed generate: non-zero, nothing on stdout, every stderr
// line naming the app and revision, and the finding.
func (g generated) red(t *testing.T, app string, code int, says string) {
	t.Helper()
	if g.code != code || g.stdout != "" || !strings.Contains(g.stderr, says) {
		t.Errorf("%s: exit %d with %d bytes on stdout, want exit %d, empty stdout and %q on stderr:\n%s", app, g.code, len(g.stdout), code, says, g.stderr)
	}
	for _, line := range strings.Split(strings.TrimRight(g.stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, app+"@4f3c2a1: ") {
			t.Errorf("%s: stderr line without the app and revision: %q", app, line)
		}
	}
}

// TestE2EArgoCDGenerate runs the plugin's generate exactly as Argo CD's
// sidecar does, on the built binary: green renders equal to kustomize
// build / helm template, red ones empty with the finding on stderr.
func TestE2EArgoCDGenerate(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	helm := testutil.Tool(t, "HELM", "helm")
	root := testutil.Root(t)
	s := newSidecar(t)
	bin := filepath.Dir(testutil.Bin(t, "gate-fn"))
	floor := filepath.Join(s.repo, "examples", "argocd", "floor", "gate.yaml")

	t.Run("kustomize green", func(t *testing.T) {
		g := s.generate(t, "shop-prod", "examples/overlays/prod")
		want := testutil.Run(t, root, "", []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "examples/overlays/prod")
		if g.code != 0 || want.Code != 0 {
			t.Fatalf("exit %d (kustomize %d):\n%s%s", g.code, want.Code, g.stderr, want.Stderr)
		}
		sameObjects(t, "generate shop-prod", g.stdout, want.Stdout)
	})
	t.Run("kustomize red", func(t *testing.T) {
		s.generate(t, "shop-retag", "examples/overlays/prod-retag").red(t, "shop-retag", 1, "shop-retag@4f3c2a1: Deployment/worker (ns shop-prod)\nshop-retag@4f3c2a1:   ERROR [image-digest] spec.template.spec.initContainers[0].image")
	})
	t.Run("helm green", func(t *testing.T) {
		chart := "examples/helm/charts/bluegreen"
		g := s.generate(t, "shop-bluegreen", chart, "KUBECTL_GATE_CONFIG="+floor,
			`ARGOCD_APP_PARAMETERS=[{"name":"values-files","array":["values-prod.yaml"]},{"name":"release-name","string":"shop"}]`)
		want := testutil.Run(t, filepath.Join(root, chart), "", nil, helm, "template", "shop", ".", "--namespace", "shop-bluegreen",
			"--values", "values-prod.yaml", "--include-crds", "--kube-version", "1.35.2")
		if g.code != 0 || want.Code != 0 {
			t.Fatalf("exit %d (helm %d):\n%s%s", g.code, want.Code, g.stderr, want.Stderr)
		}
		sameObjects(t, "generate shop-bluegreen", g.stdout, want.Stdout)
	})
	t.Run("helm red", func(t *testing.T) {
		s.generate(t, "shop-fast", "examples/helm/charts/bluegreen", "KUBECTL_GATE_CONFIG="+floor,
			`ARGOCD_APP_PARAMETERS=[{"name":"helm-parameters","map":{"bluegreen.autoPromotion":"true"}}]`).
			red(t, "shop-fast", 1, "ERROR [rollout-bluegreen-autopromotion]")
	})
	t.Run("floor: in-tree image-digest off cannot pass", func(t *testing.T) {
		app := loosenedApp(t, s.repo)
		s.generate(t, "loose", app, "KUBECTL_GATE_CONFIG="+floor).red(t, "loose", 1, "ERROR [image-digest]")
	})
	t.Run("settings tighten", func(t *testing.T) {
		s.generate(t, "shop-prod", "examples/overlays/prod", "ARGOCD_ENV_GATE_EXPECT_RESOURCES=4").
			red(t, "shop-prod", 1, "ERROR [render-count]")
	})
	t.Run("KUBE_VERSION out of range", func(t *testing.T) {
		s.generate(t, "shop-prod", "examples/overlays/prod", "KUBE_VERSION=1.20.15").red(t, "shop-prod", 3, `KUBE_VERSION="1.20.15"`)
	})
	t.Run("deadline", func(t *testing.T) {
		s.generate(t, "shop-prod", "examples/overlays/prod", "ARGOCD_ENV_GATE_TIMEOUT=1ms").red(t, "shop-prod", 3, "--timeout 1ms exceeded")
	})
	t.Run("a parameter on a kustomization", func(t *testing.T) {
		s.generate(t, "shop-prod", "examples/overlays/prod", `ARGOCD_APP_PARAMETERS=[{"name":"values","string":"a: 1"}]`).
			red(t, "shop-prod", 2, "apply to a Helm chart")
	})
}

// TestE2EArgoCDGenerateLarge renders 1,000 objects (internal/benchgen,
// images pinned) through generate, as a kustomization and as a directory
// of manifests, and logs the time and memory the README quotes.
func TestE2EArgoCDGenerateLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 1,000-object render")
	}
	s := newSidecar(t)
	var render bytes.Buffer
	if err := benchgen.Write(&render, benchgen.Options{Objects: 1000, Images: 50, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, filepath.Join(s.repo, "large", "kustomize"), map[string]string{
		"kustomization.yaml": "resources: [render.yaml]\n", "render.yaml": render.String()})
	testutil.WriteFiles(t, filepath.Join(s.repo, "large", "directory"), map[string]string{"render.yaml": render.String()})
	for _, path := range []string{"large/kustomize", "large/directory"} {
		// The budget is Argo CD's (90 s); a busy CI machine needs more
		// than the gate's own 50 s default, which is not measured here.
		g := s.generate(t, "large", path, "ARGOCD_ENV_GATE_TIMEOUT=85s")
		if g.code != 0 || len(objects(t, g.stdout)) != 1000 {
			t.Errorf("%s: exit %d, want 0 and 1000 objects:\n%s", path, g.code, g.stderr)
		}
	}
}

// loosenedApp writes, into the repository copy, an app whose image is a
// tag and whose own Gate turns image-digest off, and returns its path.
func loosenedApp(t *testing.T, repo string) string {
	t.Helper()
	path := "apps/loose"
	testutil.WriteFiles(t, filepath.Join(repo, path), map[string]string{
		"kustomization.yaml": "resources: [deploy.yaml]\nvalidators: [gate.yaml]\n",
		"gate.yaml":          "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: loose\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: gate-fn}\nspec:\n  rules: {image-digest: \"off\"}\n",
		"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: loose}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "ghcr.io/example-shop/web:1.4.2"}]
`,
	})
	return path
}

// TestE2EValidatorsRoute: gate-fn under validators:, run by the real
// kustomize CLI as Argo CD's repo-server runs it with
// kustomize.buildOptions --enable-alpha-plugins --enable-exec. Without the
// floor the repository's own Gate decides (image-digest off passes a tag);
// with KUBECTL_GATE_CONFIG it may only tighten, and the build fails.
func TestE2EValidatorsRoute(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	bin := filepath.Dir(testutil.Bin(t, "gate-fn"))
	repo := t.TempDir()
	copyDir(t, filepath.Join(testutil.Root(t), "examples"), filepath.Join(repo, "examples"))
	app := filepath.Join(repo, loosenedApp(t, repo))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	build := func(extra ...string) testutil.Result {
		return testutil.Run(t, app, "", append(env, extra...), kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	}
	if r := build(); r.Code != 0 {
		t.Errorf("no floor: exit %d, want 0 (the repository's Gate decides):\n%s", r.Code, r.Stderr)
	}
	r := build("KUBECTL_GATE_CONFIG=" + filepath.Join(repo, "examples", "argocd", "floor", "gate.yaml"))
	if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "[image-digest]") {
		t.Errorf("floor set: exit %d, want a failed build naming image-digest:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The plugin on the same overlay lets that Gate only tighten: red
	// without any floor (README "Use: the KRM function inside kustomize").
	if r := testutil.Run(t, app, "", nil, testutil.Bin(t, "kubectl-gate"), "check", "-k", "."); r.Code != 1 || !strings.Contains(r.Stdout, "[image-digest]") {
		t.Errorf("check -k: exit %d, want 1 naming image-digest:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// argoInstall stands in for the part of Argo CD's install.yaml the
// examples patch: the repo-server Deployment with the var-files and plugins
// volumes the sidecar mounts, and argocd-cm.
const argoInstall = `apiVersion: apps/v1
kind: Deployment
metadata: {name: argocd-repo-server}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: argocd-repo-server}}
  template:
    metadata: {labels: {app.kubernetes.io/name: argocd-repo-server}}
    spec:
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:v3.2.0
        volumeMounts: [{name: var-files, mountPath: /var/run/argocd}, {name: plugins, mountPath: /home/argocd/cmp-server/plugins}]
      volumes: [{name: var-files, emptyDir: {}}, {name: plugins, emptyDir: {}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
`

// TestE2EArgoCDExamplePatches builds examples/argocd/{cmp,validators} with
// the real kustomize over a stand-in for Argo CD's install and checks the
// result's schema with the gate: the patches apply and are valid objects.
func TestE2EArgoCDExamplePatches(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	gate := testutil.Bin(t, "kubectl-gate")
	repo := t.TempDir()
	copyDir(t, filepath.Join(testutil.Root(t), "examples"), filepath.Join(repo, "examples"))
	for _, route := range []string{"cmp", "validators"} {
		dir := filepath.Join(repo, "examples", "argocd", route)
		kust := filepath.Join(dir, "kustomization.yaml")
		b, err := os.ReadFile(kust)
		if err != nil {
			t.Fatal(err)
		}
		local := strings.Replace(string(b), "  - https://raw.githubusercontent.com/argoproj/argo-cd/v3.2.0/manifests/install.yaml", "  - install.yaml", 1)
		if local == string(b) {
			t.Fatalf("%s: no Argo CD install in resources", kust)
		}
		testutil.WriteFiles(t, dir, map[string]string{"kustomization.yaml": local, "install.yaml": argoInstall})
		built := testutil.Run(t, dir, "", nil, kustomize, "build", ".")
		if built.Code != 0 {
			t.Fatalf("%s: kustomize build: %s", route, built.Stderr)
		}
		for _, want := range map[string][]string{
			"cmp":        {"name: kubectl-gate\n", "argocd-cmp-server", "name: kubectl-gate-plugin", "KUBECTL_GATE_CONFIG", "kind: ConfigManagementPlugin"},
			"validators": {"name: install-gate-fn", "--enable-alpha-plugins --enable-exec", "KUBECTL_GATE_CONFIG", "mountPath: /custom-tools"},
		}[route] {
			if !strings.Contains(built.Stdout, want) {
				t.Errorf("%s: the build lacks %q:\n%s", route, want, built.Stdout)
			}
		}
		// The example images are tags (pin them before use), so the digest
		// rule is off here; everything else, schema included, must pass.
		r := testutil.Run(t, dir, built.Stdout, nil, gate, "check", "-f", "-", "--rule", "image-digest=off")
		if r.Code != 0 {
			t.Errorf("%s: check of the build: exit %d\n%s%s", route, r.Code, r.Stdout, r.Stderr)
		}
	}
}
