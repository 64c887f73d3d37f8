package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// boundCases are the hostile rows of issue 18's second round: reads
// outside the checkout through every renderer, memory and output bombs,
// the deadline after --write-kustomization's write, and the cache. Each
// builds its own probe (symlinks, FIFOs, devices) in the case's directory.
func boundCases(t *testing.T) []hostileCase {
	reg := testutil.StartRegistry(t)
	digest := reg.PushImage(t, "app:1")
	pod := strings.Replace(podLatest, "nginx:latest", reg.Host+"/app@"+digest, 1)
	// A cache outside the case's directory (its entries are written).
	fifoCache := t.TempDir()
	entry := sha256.Sum256([]byte(reg.Host + "/app@" + digest))
	// --write-kustomization renders again with the digests; the remote
	// resource answers the first render and stalls the second.
	stall := answerOnceServer(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n")
	tagged := strings.Replace(podLatest, "nginx:latest", reg.Host+"/app:1", 1)
	// What lies outside every case's checkout: a file a token-like value
	// sits in, and a chart.
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "token"), []byte("ghp_S3cr3tT0ken\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(outside, "cluster.json"), []byte(`{"name": "leaked-from-outside"}`), 0o600))
	testutil.WriteFiles(t, filepath.Join(outside, "lib"), map[string]string{"Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-outside}\n"})
	// A base outside the checkout whose ConfigMap holds the token, and a
	// chart whose template reads the file beside it.
	testutil.WriteFiles(t, outside, map[string]string{"kbase/kustomization.yaml": "resources: [cm.yaml]\n",
		"kbase/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: ghp_S3cr3tT0ken}\n",
		"charts/evil/Chart.yaml":       "apiVersion: v2\nname: evil\nversion: 0.1.0\n",
		"charts/evil/token":            "ghp_S3cr3tT0ken\n",
		"charts/evil/templates/p.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: {{ .Files.Get \"token\" | trim | quote }}}]}\n"})
	// leak copies the ConfigMap's token into the Pod's image (a finding
	// would quote it); its resources name the base as base.
	leak := "resources: [pod.yaml, base]\nreplacements:\n- source: {kind: ConfigMap, name: leaked, fieldPath: data.token}\n  targets:\n  - select: {kind: Pod, name: p}\n    fieldPaths: [spec.containers.0.image]\n"
	leakKust := func(base string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			rel, err := filepath.Rel(filepath.Join(dir, "app"), base)
			must(t, err)
			testutil.WriteFiles(t, dir, map[string]string{"app/kustomization.yaml": strings.Replace(leak, "base]", filepath.ToSlash(rel)+"]", 1)})
		}
	}
	// inCheckout makes the tree a repository, as a pull request's checkout
	// is: a kustomization in none renders as kustomize renders it.
	inCheckout := func(setup func(t *testing.T, dir string)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
			if setup != nil {
				setup(t, dir)
			}
		}
	}
	chart := map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: files}\ndata: {leak: {{ .Files.Get \"files/leak\" | quote }}}\n"}
	linkOut := func(link, target string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755))
			must(t, os.Symlink(target, filepath.Join(dir, link)))
		}
	}
	flux := map[string]string{
		"clusters/sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 10m, url: https://example.com/fleet.git, ref: {branch: main}}\n",
		"clusters/web.yaml":  "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: flux-system}\nspec:\n  interval: 10m\n  chart:\n    spec: {chart: ./chart, sourceRef: {kind: GitRepository, name: flux-system}}\n",
	}
	for k, v := range chart {
		flux[k] = v
	}
	fluxKust := map[string]string{
		"clusters/sync.yaml":     flux["clusters/sync.yaml"],
		"clusters/app.yaml":      "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\nspec: {interval: 10m, path: ./app, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"app/kustomization.yaml": "resources: [pod.yaml]\n",
	}
	argoHelm := map[string]string{"app.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: https://example.com/r.git, path: chart}\n  destination: {server: https://kubernetes.default.svc, namespace: web}\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n"}
	appsetHead := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: bomb, namespace: argocd}\nspec:\n  goTemplate: true\n"
	appsetTemplate := "  template:\n    metadata: {name: 'NAME'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/r.git, path: apps}\n      destination: {server: https://kubernetes.default.svc, namespace: x}\n"
	list := func(n int, key string) string {
		var b strings.Builder
		b.WriteString("      - list:\n          elements:\n")
		for i := range n {
			fmt.Fprintf(&b, "          - {%s: '%d'}\n", key, i)
		}
		return b.String()
	}
	gateKust := "resources: [pod.yaml]\nvalidators: [gates/gate.yaml]\n"
	gateHead := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec: "
	pinned := strings.Replace(podLatest, "nginx:latest", "nginx@"+pinnedDigest, 1)
	vap := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-latest}\nspec:\n  failurePolicy: Fail\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: 'object.spec.containers.all(c, !c.image.endsWith(\":latest\"))', message: no latest}]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-latest}\nspec: {policyName: no-latest, validationActions: [Deny]}\n"
	return []hostileCase{
		// Reads outside the checkout, through every renderer.
		{name: "Flux HelmRelease chart file symlinked to /proc/self/environ", args: []string{"check", "-R", "-f", "clusters", "--apps-root", ".", "--repo-url", "https://example.com/fleet.git"},
			files: flux, setup: linkOut("chart/files/leak", "/proc/self/environ"), code: 3, want: "chart/files/leak is a symlink that leaves", reject: "XDG_CONFIG_HOME=", stdout: true},
		{name: "Argo CD Helm source with an absolute file:// dependency", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: argoHelm, setup: func(t *testing.T, dir string) {
				testutil.WriteFiles(t, dir, map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n- {name: lib, version: 0.1.0, repository: 'file://" + filepath.Join(outside, "lib") + "'}\n"})
			}, code: 3, want: "lies outside", reject: "from-outside", stdout: true},
		{name: "Argo CD Helm source with a file://../../.. dependency", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: argoHelm, setup: func(t *testing.T, dir string) {
				testutil.WriteFiles(t, dir, map[string]string{"chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n- {name: lib, version: 0.1.0, repository: 'file://" + strings.Repeat("../", 20) + strings.TrimPrefix(filepath.Join(outside, "lib"), "/") + "'}\n"})
			}, code: 3, want: "lies outside", reject: "from-outside", stdout: true},
		{name: "ApplicationSet git files generator reads a symlink out of the checkout", args: []string{"check", "-f", "appset.yaml", "--apps-root", "."},
			files: map[string]string{"appset.yaml": appsetHead + "  generators:\n  - git:\n      repoURL: https://example.com/r.git\n      revision: HEAD\n      files: [{path: 'clusters/*.json'}]\n" + strings.Replace(appsetTemplate, "NAME", "{{.name}}", 1)},
			setup: linkOut("clusters/prod.json", filepath.Join(outside, "cluster.json")), code: 3, want: "clusters/prod.json is a symlink that leaves", reject: "leaked-from-outside", stdout: true},
		{name: "--chart .Files.Get through a symlink out of the chart", args: []string{"check", "--chart", "chart"},
			files: chart, setup: linkOut("chart/files/leak", filepath.Join(outside, "token")), code: 3, want: "chart/files/leak is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "pin --chart .Files.Get through a symlink out of the chart", args: []string{"pin", "--chart", "chart"},
			files: chart, setup: linkOut("chart/files/leak", filepath.Join(outside, "token")), code: 3, want: "is a symlink that leaves", reject: "ghp_S3cr3t"},
		{name: "-k --enable-helm chart with a symlink out of it", args: []string{"check", "-k", ".", "--enable-helm"},
			files: map[string]string{"kustomization.yaml": "helmCharts:\n- {name: web, releaseName: web}\n", "charts/web/Chart.yaml": chart["chart/Chart.yaml"], "charts/web/templates/cm.yaml": chart["chart/templates/cm.yaml"], "charts/web/values.yaml": "{}\n"},
			setup: linkOut("charts/web/files/leak", filepath.Join(outside, "token")), code: 3, want: "is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "-k base through a directory symlink out of the checkout", args: []string{"check", "-k", "app"},
			files: map[string]string{"app/kustomization.yaml": leak, "app/pod.yaml": podLatest}, setup: linkOut("app/base", filepath.Join(outside, "kbase")),
			code: 3, want: "app/base is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "-k -o sarif base through a directory symlink out, LoadRestrictionsNone", args: []string{"check", "-k", "app", "-o", "sarif", "--load-restrictor", "LoadRestrictionsNone"},
			files: map[string]string{"app/kustomization.yaml": leak, "app/pod.yaml": podLatest}, setup: linkOut("app/base", filepath.Join(outside, "kbase")),
			code: 3, want: "app/base is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "-k -o json base named with ../ out of the checkout", args: []string{"check", "-k", "app", "-o", "json"},
			files: map[string]string{"app/pod.yaml": podLatest}, setup: inCheckout(leakKust(filepath.Join(outside, "kbase"))),
			code: 3, want: "lies outside .", reject: "ghp_S3cr3t", stdout: true},
		{name: "-k file:// base, LoadRestrictionsNone", args: []string{"check", "-k", "app", "--load-restrictor", "LoadRestrictionsNone"},
			files: map[string]string{"app/kustomization.yaml": "resources: [pod.yaml, 'file://" + filepath.Join(outside, "kbase") + "']\n", "app/pod.yaml": podLatest},
			code:  3, want: "is a file:// repository", stdout: true},
		{name: "-k --enable-helm helmGlobals.chartHome out of the checkout", args: []string{"check", "-k", "app", "--enable-helm"},
			files: map[string]string{"app/kustomization.yaml": "helmGlobals: {chartHome: " + filepath.Join(outside, "charts") + "}\nhelmCharts:\n- {name: evil, releaseName: x, valuesFile: values.yaml}\n", "app/values.yaml": "{}\n"},
			setup: inCheckout(nil), code: 3, want: "helmGlobals.chartHome", reject: "ghp_S3cr3t", stdout: true},
		{name: "Argo CD source's base out of the --apps-root checkout, LoadRestrictionsNone", args: []string{"check", "-f", "apps", "--apps-root", ".", "--load-restrictor", "LoadRestrictionsNone"},
			files: map[string]string{"app/pod.yaml": podLatest, "apps/app.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: https://example.com/r.git, path: app}\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"},
			setup: leakKust(filepath.Join(outside, "kbase")), code: 3, want: "--apps-root checkout alone", reject: "ghp_S3cr3t", stdout: true},
		{name: "-f DIR with a symlink out of the checkout", args: []string{"check", "-f", "d"},
			files: map[string]string{"d/pod.yaml": podLatest}, setup: inCheckout(linkOut("d/z.yaml", filepath.Join(outside, "kbase", "cm.yaml"))),
			code: 3, want: "d/z.yaml is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "in-tree Gate policy is /dev/zero", args: []string{"check", "-k", "."},
			files: map[string]string{"kustomization.yaml": gateKust, "pod.yaml": pinned, "gates/gate.yaml": gateHead + "{policies: [/dev/zero]}\n"}, code: 3, want: "/dev/zero lies outside", stdout: true},
		{name: "in-tree Gate policy names a token file outside the checkout", args: []string{"check", "-k", "."},
			files: map[string]string{"kustomization.yaml": gateKust, "pod.yaml": pinned, "gates/gate.yaml": gateHead + "{policies: [" + filepath.Join(outside, "token") + "]}\n"}, code: 3, want: "lies outside", reject: "ghp_S3cr3t", stdout: true},
		{name: "in-tree Gate policy symlinked out of the checkout", args: []string{"check", "-k", "."},
			files: map[string]string{"kustomization.yaml": gateKust, "pod.yaml": pinned, "gates/gate.yaml": gateHead + "{policies: [vap.yaml]}\n"},
			setup: linkOut("gates/vap.yaml", filepath.Join(outside, "token")), code: 3, want: "gates/vap.yaml is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "in-tree Gate policy resolves against the Gate's own directory", args: []string{"check", "-k", ".", "--config", "../trusted/gate.yaml"},
			files: map[string]string{"o/kustomization.yaml": gateKust, "o/pod.yaml": podLatest, "o/gates/gate.yaml": gateHead + "{policies: [vap.yaml]}\n", "o/gates/vap.yaml": vap,
				"trusted/gate.yaml": gateHead + "{rules: {image-digest: \"off\"}}\n"}, code: 1, want: "no latest", stdout: true},
		{name: "-k resource over --max-input-bytes", args: []string{"check", "-k", ".", "--max-input-bytes", "1000"},
			files: map[string]string{"kustomization.yaml": "resources: [pod.yaml]\n", "pod.yaml": strings.Repeat("# padding\n", 200) + pinned}, code: 3, want: "larger than 1000 bytes", stdout: true},
		{name: "-k resource is a FIFO", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": "resources: [pod.yaml]\n"},
			setup: func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "pod.yaml"), 0o644)) }, code: 3, want: "pod.yaml is not a regular file (a FIFO)", stdout: true, maxTime: 5 * time.Second},
		// A Flux Kustomization's render reads the checkout through the
		// same boundary as -k: a FIFO, a link out, a file over the cap.
		{name: "Flux Kustomization resource is a FIFO", args: []string{"check", "-R", "-f", "clusters", "--apps-root", ".", "--repo-url", "https://example.com/fleet.git"},
			files: fluxKust, setup: func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "app/pod.yaml"), 0o644)) },
			code: 3, want: "pod.yaml is not a regular file (a FIFO)", stdout: true, maxTime: 5 * time.Second},
		{name: "Flux Kustomization resource symlinked out of the checkout", args: []string{"check", "-R", "-f", "clusters", "--apps-root", ".", "--repo-url", "https://example.com/fleet.git"},
			files: fluxKust, setup: linkOut("app/pod.yaml", filepath.Join(outside, "kbase", "cm.yaml")), code: 3, want: "app/pod.yaml is a symlink that leaves", reject: "ghp_S3cr3t", stdout: true},
		{name: "Flux Kustomization resource over --max-input-bytes", args: []string{"check", "-R", "-f", "clusters", "--apps-root", ".", "--repo-url", "https://example.com/fleet.git", "--max-input-bytes", "1000"},
			files: fluxKust, setup: func(t *testing.T, dir string) {
				testutil.WriteFiles(t, dir, map[string]string{"app/pod.yaml": strings.Repeat("# padding\n", 200) + pinned})
			}, code: 3, want: "pod.yaml is larger than 1000 bytes", stdout: true},
		{name: "Flux Kustomization listed manifest is a FIFO", args: []string{"check", "-R", "-f", "clusters", "--apps-root", ".", "--repo-url", "https://example.com/fleet.git"},
			files: map[string]string{"clusters/sync.yaml": fluxKust["clusters/sync.yaml"], "clusters/app.yaml": fluxKust["clusters/app.yaml"], "app/ok.yaml": pinned},
			setup: func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "app/pod.yaml"), 0o644)) },
			code:  3, want: "pod.yaml is not a regular file (a FIFO)", stdout: true, maxTime: 5 * time.Second},
		// Memory and output bombs.
		{name: "ApplicationSet 10k × 10k matrix", args: []string{"check", "-f", "appset.yaml", "--apps-root", "."},
			files: map[string]string{"appset.yaml": appsetHead + "  generators:\n  - matrix:\n      generators:\n" + list(10000, "a") + list(10000, "b") + strings.Replace(appsetTemplate, "NAME", "a{{.a}}-{{.b}}", 1)},
			code:  3, want: "100000000 generated param sets over the cap of 10000", stdout: true, maxTime: 10 * time.Second},
		{name: "ApplicationSet repeat of repeat (461 bytes)", args: []string{"check", "-f", "appset.yaml", "--apps-root", "."},
			files: map[string]string{"appset.yaml": appsetHead + "  generators:\n  - list:\n      elements: [{name: a}]\n" + strings.Replace(appsetTemplate, "NAME", `{{ repeat 100000 (repeat 100000 "x") }}`, 1)},
			code:  3, want: "over the output cap", stdout: true},
		{name: "chart repeat of repeat", args: []string{"check", "--chart", "chart"},
			files: map[string]string{"chart/Chart.yaml": chart["chart/Chart.yaml"], "chart/templates/x.yaml": `x: {{ repeat 100000 (repeat 100000 "x") }}`}, code: 3, want: "over the output cap", stdout: true},
		{name: "tpl self-recursion in Helm values ends at the memory cap", args: []string{"check", "--chart", "chart"}, env: []string{"KUBECTL_GATE_MAX_MEMORY=300000000"},
			files: map[string]string{"chart/Chart.yaml": chart["chart/Chart.yaml"], "chart/values.yaml": "x: '{{ tpl .Values.x . }}'\n", "chart/templates/x.yaml": "a: {{ tpl .Values.x . }}\n"},
			code:  3, want: "NO VERDICT: the run used more than 300000000 bytes of memory"},
		{name: "chart emits a million objects", args: []string{"check", "--chart", "chart"},
			files: map[string]string{"chart/Chart.yaml": chart["chart/Chart.yaml"], "chart/templates/x.yaml": "{{ range until 1000000 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{ end }}"},
			code:  3, want: "over the cap of", stdout: true, maxTime: 15 * time.Second},
		{name: "write-kustomization, remote stalls on the render with the digests, --timeout 3s", args: []string{"pin", "--write-kustomization", ".", "--insecure-registry", reg.Host, "--timeout", "3s"},
			files: map[string]string{"kustomization.yaml": "resources:\n- pod.yaml\n- http://" + stall + "/timeout.yaml\n", "pod.yaml": tagged},
			code:  3, want: "--timeout 3s exceeded", maxTime: 6 * time.Second},
		{name: "write-kustomization, remote stalls on the render with the digests, SIGTERM", args: []string{"pin", "--write-kustomization", ".", "--insecure-registry", reg.Host},
			files:  map[string]string{"kustomization.yaml": "resources:\n- pod.yaml\n- http://" + stall + "/sigterm.yaml\n", "pod.yaml": tagged},
			signal: syscall.SIGTERM, signalAfter: 2 * time.Second, code: 3, want: "interrupted by SIGTERM", maxTime: 4 * time.Second},
		{name: "world-writable --cache root", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", "shared"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				must(t, os.Mkdir(filepath.Join(dir, "shared"), 0o700))
				must(t, os.Chmod(filepath.Join(dir, "shared"), 0o777))
			}, code: 2, want: "cache directory shared is writable by other users", stdout: true},
		{name: "--cache is a symlink to a world-writable directory", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", "c"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				shared := filepath.Join(t.TempDir(), "shared")
				must(t, os.Mkdir(shared, 0o700))
				must(t, os.Chmod(shared, 0o777))
				must(t, os.Symlink(shared, filepath.Join(dir, "c")))
			}, code: 2, want: "(a symlink to ", stdout: true},
		{name: "a FIFO cache entry is not waited on", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", fifoCache, "--timeout", "20s"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				p := filepath.Join(fifoCache, "v2", "digests")
				must(t, os.MkdirAll(p, 0o700))
				must(t, syscall.Mkfifo(filepath.Join(p, hex.EncodeToString(entry[:])+".json"), 0o600))
			}, code: 0, want: "PASS", stdout: true, maxTime: 5 * time.Second},
	}
}

// answerOnceServer serves body on the first request for each path and
// stalls every later one until its client goes; it returns host:port. The
// count is per path, so two rows need two paths.
func answerOnceServer(t *testing.T, body string) string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		n := seen[r.URL.Path]
		mu.Unlock()
		if n > 1 {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.CloseClientConnections)
	return strings.TrimPrefix(srv.URL, "http://")
}
