package plugin

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// hostileCase is one row of the bad-input and fault suite: a command on a
// built binary, what it must exit with and say, within bounded time and
// memory, having written nothing (stdout empty unless allowed, the files
// of its directory unchanged).
type hostileCase struct {
	name   string
	bin    string // kubectl-gate or gate-fn
	args   []string
	stdin  string
	files  map[string]string
	setup  func(t *testing.T, dir string)
	code   int
	want   string
	stdout bool   // may write to stdout (a report)
	reject string // must not appear in the output
	// signal is sent signalAfter the start; maxTime, when set, is the
	// case's own time bound.
	signal      syscall.Signal
	signalAfter time.Duration
	maxTime     time.Duration
	// env is added to the command's environment ($DIR: the case's
	// directory); after checks what the run left behind.
	env   []string
	after func(t *testing.T, dir string)
}

// The limits every case must stay under.
const (
	hostileMaxTime = 30 * time.Second
	hostileMaxRSS  = 512 << 10 // KiB
)

const podLatest = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx:latest}]}\n"

var pinnedDigest = "sha256:" + strings.Repeat("a", 64)

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\na: &a [x, x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	return b.String()
}

func hostileCases(t *testing.T) []hostileCase {
	reg := testutil.StartRegistry(t)
	index, child := pushPlatformIndex(t, reg.Host+"/multi:1")
	reg.PushImage(t, "lie:1")
	// The registry lies: every HEAD labels what it describes as an image,
	// and a GET of lie:1 carries a digest header its body does not hash to.
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			w = lyingWriter{ResponseWriter: w, method: r.Method, forge: strings.Contains(r.URL.Path, "/lie/")}
		}
		next.ServeHTTP(w, r)
	}
	gate := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec: "
	kust := "resources: [pod.yaml]\nvalidators: [gate.yaml]\n"
	// A remote resource on a loopback server that accepts and never answers.
	hang := "resources:\n- pod.yaml\n- http://" + silentServer(t) + "/remote.yaml\n"
	hangFiles := map[string]string{"kustomization.yaml": hang, "pod.yaml": strings.Replace(podLatest, "nginx:latest", "nginx@"+pinnedDigest, 1)}
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: https://example.com/r.git, path: app}\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"
	return []hostileCase{
		{name: "remote resource never answers, --timeout 2s", args: []string{"check", "-k", ".", "--timeout", "2s"}, files: hangFiles, code: 3, want: "rendering .: --timeout 2s exceeded", maxTime: 4 * time.Second},
		{name: "selftest, remote resource never answers, --timeout 2s", args: []string{"selftest", "-k", ".", "--timeout", "2s"}, files: hangFiles, code: 3, want: "rendering .: --timeout 2s exceeded", maxTime: 4 * time.Second},
		{name: "remote resource never answers, SIGTERM", args: []string{"check", "-k", "."}, files: hangFiles, signal: syscall.SIGTERM, signalAfter: 500 * time.Millisecond, code: 3, want: "rendering .: interrupted by SIGTERM", maxTime: 2 * time.Second},
		{name: "remote resource never answers, SIGINT", args: []string{"pin", "-k", "."}, files: hangFiles, signal: syscall.SIGINT, signalAfter: 500 * time.Millisecond, code: 3, want: "interrupted by SIGINT", maxTime: 2 * time.Second},
		{name: "write-kustomization, remote never answers, SIGTERM", args: []string{"pin", "--write-kustomization", "."}, files: hangFiles, signal: syscall.SIGTERM, signalAfter: 500 * time.Millisecond, code: 3, want: "interrupted by SIGTERM", maxTime: 2 * time.Second},
		{name: "--no-remote refuses a remote resource", args: []string{"check", "-k", ".", "--no-remote"}, files: hangFiles, code: 3, want: `remote resources are denied (--no-remote, spec.render.remote: deny), nothing was fetched: kustomization.yaml: resources entry "http://`, stdout: true, maxTime: 2 * time.Second},
		{name: "config render.remote: deny refuses a remote resource", args: []string{"check", "-k", ".", "--config", "../gate.yaml"}, files: map[string]string{"o/kustomization.yaml": hang, "o/pod.yaml": hangFiles["pod.yaml"], "gate.yaml": gate + "{render: {remote: deny}}\n"}, code: 3, want: "remote resources are denied", stdout: true, maxTime: 2 * time.Second},
		{name: "Argo CD source in a checkout with a symlink out of it", args: []string{"check", "-f", "app.yaml", "--apps-root", "."}, files: map[string]string{"app.yaml": app, "app/pod.yaml": podLatest},
			setup: func(t *testing.T, dir string) {
				must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "app", "passwd.yaml")))
			}, code: 3, want: "symlink that leaves it: app/passwd.yaml -> /etc/passwd", stdout: true},
		{name: "bare list (panicked)", args: []string{"check", "-f", "-"}, stdin: "- a\n", code: 3, want: "a list, not a Kubernetes object", stdout: true},
		{name: "image by alias is seen", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {x: &i nginx}}\nspec: {containers: [{name: c, image: *i}]}\n", code: 1, want: "image-digest", stdout: true},
		{name: "image by merge key is seen", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - <<: {image: nginx:latest}\n    name: c\n", code: 1, want: "image-digest", stdout: true},
		{name: "merge key after a pinned image overwrites it (kubectl's go-yaml v2)", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx@" + pinnedDigest + "\n    <<: {image: nginx:latest}\n", code: 1, want: `image "nginx:latest" is not pinned by digest (tag latest) [line 8]`, stdout: true},
		{name: "of two merge keys the later wins", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    <<: {image: nginx@" + pinnedDigest + "}\n    <<: {image: nginx:latest}\n", code: 1, want: `image "nginx:latest" is not pinned by digest (tag latest) [line 8]`, stdout: true},
		{name: "a pinned image after a merge key overwrites it", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    <<: {image: nginx:latest}\n    image: nginx@" + pinnedDigest + "\n", code: 0, want: "PASS", stdout: true},
		{name: "duplicate image key", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: nginx@" + pinnedDigest + "\n    image: nginx:latest\n", code: 3, want: `key "image" already defined`, stdout: true},
		{name: "DeploymentList flattened", args: []string{"check", "-f", "-"}, stdin: "apiVersion: apps/v1\nkind: DeploymentList\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec: {template: {spec: {containers: [{name: c, image: nginx:latest}]}}}\n", code: 1, want: "image-digest", stdout: true},
		{name: "List with a map as items", args: []string{"check", "-f", "-"}, stdin: "apiVersion: v1\nkind: List\nitems: {a: 1}\n", code: 3, want: "items is a mapping", stdout: true},
		{name: "input over the size cap", args: []string{"check", "-f", "-", "--max-input-bytes", "1000"}, stdin: strings.Repeat("# padding\n", 200) + podLatest, code: 3, want: "larger than 1000 bytes", stdout: true},
		{name: "billion laughs", args: []string{"check", "-f", "-"}, stdin: billionLaughs(), code: 3, want: "excessive aliasing", stdout: true},
		{name: "bad --rule value", args: []string{"check", "-f", "-", "--rule", "image-digest=bogus"}, stdin: podLatest, code: 2, want: `"bogus" is not error, warning or off`},
		{name: "unknown --rule id", args: []string{"check", "-f", "-", "--rule", "nosuch=off"}, stdin: podLatest, code: 2, want: "unknown rule id"},
		{name: "bad --digest value", args: []string{"check", "-f", "-", "--digest", "maybe"}, stdin: podLatest, code: 2, want: `"maybe" is not require, verify or off`},
		{name: "bad --platform value", args: []string{"check", "-f", "-", "--platform", "arm64"}, stdin: podLatest, code: 2, want: "is not os/arch"},
		{name: "typo'd Gate in the kustomization", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": kust, "pod.yaml": podLatest, "gate.yaml": gate + "{images: {digests: off}}\n"}, code: 2, want: `unknown field "spec.images.digests"`, stdout: true},
		{name: "validator symlinked to /dev/zero", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": kust, "pod.yaml": podLatest},
			setup: func(t *testing.T, dir string) { must(t, os.Symlink("/dev/zero", filepath.Join(dir, "gate.yaml"))) }, code: 2, want: "load restrictor", stdout: true},
		{name: "validator is a FIFO", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": kust, "pod.yaml": podLatest},
			setup: func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "gate.yaml"), 0o644)) }, code: 2, want: "not a regular file", stdout: true},
		{name: "in-tree Gate turns image-digest off", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": kust, "pod.yaml": podLatest, "gate.yaml": gate + "{rules: {image-digest: \"off\"}}\n"}, code: 1, want: "image-digest", stdout: true},
		{name: "the report says which config decided", args: []string{"check", "-k", "."}, files: map[string]string{"kustomization.yaml": kust, "pod.yaml": podLatest, "gate.yaml": gate + "{rules: {image-digest: \"off\"}}\n"}, code: 1, want: "config: built-in defaults + in-tree Gate", stdout: true},
		{name: "in-tree mirror is ignored (a PR cannot choose the registry)", args: []string{"pin", "-k", ".", "--timeout", "5s"},
			files: map[string]string{"kustomization.yaml": kust, "pod.yaml": strings.Replace(podLatest, "nginx:latest", "registry.invalid/multi:1", 1),
				"gate.yaml": gate + "{images: {mirrors: {registry.invalid: " + reg.Host + "}, insecureRegistries: [" + reg.Host + "]}}\n"}, code: 3, want: "its registry settings are ignored"},
		{name: "config with two documents", args: []string{"check", "-f", "pod.yaml", "--config", "gate.yaml"}, files: map[string]string{"pod.yaml": podLatest, "gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\n---\napiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {rules: {image-digest: \"off\"}}\n"}, code: 2, want: "more than one YAML document"},
		{name: "config says digest: off unquoted", args: []string{"check", "-f", "pod.yaml", "--config", "gate.yaml"}, files: map[string]string{"pod.yaml": podLatest, "gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {images: {digest: off}, rules: {image-digest: off}}\n"}, code: 0, want: "PASS", stdout: true},
		{name: "pin with image-resolve=off, registry down", args: []string{"pin", "-f", "-", "--rule", "image-resolve=off", "--insecure-registry", "127.0.0.1:1", "--timeout", "5s"}, stdin: strings.Replace(podLatest, "nginx:latest", "127.0.0.1:1/app:v1", 1), code: 3, want: "image-resolve"},
		{name: "write-kustomization with image-resolve=off, registry down", args: []string{"pin", "--write-kustomization", ".", "--rule", "image-resolve=off", "--insecure-registry", "127.0.0.1:1", "--timeout", "5s"},
			files: map[string]string{"kustomization.yaml": "resources: [pod.yaml]\n", "pod.yaml": strings.Replace(podLatest, "nginx:latest", "127.0.0.1:1/app:v1", 1)}, code: 3, want: "could not be resolved"},
		{name: "verify with image-resolve=warning, registry down", args: []string{"check", "-f", "-", "--digest", "verify", "--rule", "image-resolve=warning", "--insecure-registry", "127.0.0.1:1", "--timeout", "5s"},
			stdin: strings.Replace(podLatest, "nginx:latest", "127.0.0.1:1/app@"+pinnedDigest, 1), code: 3, want: "image-resolve", stdout: true},
		{name: "registry labels an index as an image (--platform)", args: []string{"pin", "-f", "-", "--platform", "linux/arm64", "--insecure-registry", reg.Host},
			stdin: strings.Replace(podLatest, "nginx:latest", reg.Host+"/multi:1", 1), code: 0, want: child, reject: index, stdout: true},
		{name: "digest header disagrees with the body", args: []string{"pin", "-f", "-", "--platform", "linux/arm64", "--insecure-registry", reg.Host},
			stdin: strings.Replace(podLatest, "nginx:latest", reg.Host+"/lie:1", 1), code: 3, want: "answered inconsistently"},
		{name: "status with an empty kubeconfig", args: []string{"status", "shop", "--kubeconfig", "empty", "--timeout", "5s"}, files: map[string]string{"empty": ""}, code: 3, want: "no cluster configured"},
		{name: "fn: ResourceList without items", bin: "gate-fn", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {apiVersion: kubectl-gate.dev/v1alpha1, kind: Gate, spec: {}}\n", code: 1, want: "no items list"},
		{name: "fn: image by alias is seen", bin: "gate-fn", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p, labels: {x: &i nginx}}, spec: {containers: [{name: c, image: *i}]}}\n", code: 1, want: "image-digest", stdout: true},
		{name: "fn: duplicate key", bin: "gate-fn", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p, name: q}}\n", code: 1, want: "already defined"},
		{name: "fn: bare list", bin: "gate-fn", stdin: "- a\n", code: 1, want: "not a ResourceList"},
		{name: "fn: billion laughs", bin: "gate-fn", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nx:\n  " + strings.ReplaceAll(billionLaughs(), "\n", "\n  "), code: 1, want: "excessive aliasing"},
	}
}

// lyingWriter makes the in-process registry lie about manifests: HEAD
// answers carry an image media type whatever they describe.
type lyingWriter struct {
	http.ResponseWriter
	method string
	forge  bool
}

func (w lyingWriter) WriteHeader(code int) {
	if code == http.StatusOK && w.method == http.MethodHead {
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
	}
	if code == http.StatusOK && w.forge {
		w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("f", 64))
	}
	w.ResponseWriter.WriteHeader(code)
}

// pushPlatformIndex pushes an index of a linux/amd64 and a linux/arm64
// image and returns the index digest and the arm64 child's.
func pushPlatformIndex(t *testing.T, ref string) (index, arm64 string) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
		img, err := random.Image(256, 1)
		must(t, err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
		if p.Architecture == "arm64" {
			d, err := img.Digest()
			must(t, err)
			arm64 = d.String()
		}
	}
	tag, err := name.NewTag(ref, name.Insecure)
	must(t, err)
	must(t, remote.WriteIndex(tag, idx))
	d, err := idx.Digest()
	must(t, err)
	return d.String(), arm64
}

// TestE2EHostileInputAndFaults is the bad-input and fault suite on the
// built binaries: every row's exit code, message, time and peak memory,
// and that nothing was written. It logs a table (go test -v).
func TestE2EHostileInputAndFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	var table strings.Builder
	table.WriteString("| case | exit | time | max RSS | message |\n|---|---|---|---|---|\n")
	for _, c := range append(append(append(hostileCases(t), boundCases(t)...), verdictCases(t)...), round2bCases(t)...) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, c.files)
			if c.setup != nil {
				c.setup(t, dir)
			}
			before := snapshot(t, dir)
			bin := c.bin
			if bin == "" {
				bin = "kubectl-gate"
			}
			cmd := exec.Command(testutil.Bin(t, bin), c.args...)
			cmd.Dir, cmd.Stdin = dir, strings.NewReader(c.stdin)
			if c.files["o/kustomization.yaml"] != "" {
				cmd.Dir = filepath.Join(dir, "o")
			}
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(dir, "absent"))
			for _, e := range c.env {
				cmd.Env = append(cmd.Env, strings.ReplaceAll(e, "$DIR", dir))
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(hostileMaxTime, func() { _ = cmd.Process.Kill() })
			if c.signal != 0 {
				sig := time.AfterFunc(c.signalAfter, func() { _ = cmd.Process.Signal(c.signal) })
				defer sig.Stop()
			}
			_ = cmd.Wait()
			timer.Stop()
			took := time.Since(start)
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
			code := cmd.ProcessState.ExitCode()
			msg := firstLine(errb.String() + out.String())
			fmt.Fprintf(&table, "| %s | %d | %v | %d MiB | %s |\n", c.name, code, took.Round(10*time.Millisecond), rss>>10, msg)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out.String(), errb.String())
			}
			if !says(out.String()+errb.String(), c.want) {
				t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", c.want, out.String(), errb.String())
			}
			if c.maxTime > 0 && took >= c.maxTime {
				t.Errorf("took %v, want under %v", took, c.maxTime)
			}
			if took >= hostileMaxTime || rss > hostileMaxRSS {
				t.Errorf("took %v and %d KiB; limits %v, %d KiB", took, rss, hostileMaxTime, hostileMaxRSS)
			}
			if c.reject != "" && strings.Contains(out.String()+errb.String(), c.reject) {
				t.Errorf("output holds %q", c.reject)
			}
			if !c.stdout && out.Len() > 0 && c.bin == "" {
				t.Errorf("wrote to stdout:\n%s", out.String())
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the directory changed:\nbefore %s\nafter  %s", before, after)
			}
			if c.after != nil {
				c.after(t, dir)
			}
		})
	}
	t.Log("\n" + table.String())
}

// snapshot names and hashes every regular file under dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		fmt.Fprintf(&b, "%s=%x ", strings.TrimPrefix(p, dir), sha256.Sum256(data))
		return nil
	})
	return b.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 110 {
		s = s[:110] + "…"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// silentServer listens on loopback, accepts connections and never answers
// (a remote resource that hangs); it returns host:port.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
