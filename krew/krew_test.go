package krew

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// committedVersion is the version krew/gate.yaml is rendered for.
const committedVersion = "v0.1.0"

func fakeSums() map[string]string {
	sums := map[string]string{}
	for i, p := range Platforms {
		sums[p.Archive()] = strings.Repeat(string("0123456789abcdef"[i]), 64)
	}
	return sums
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRender(t *testing.T) {
	tmpl := readFile(t, "gate.yaml.tmpl")
	ok := Options{Template: tmpl, Version: "v1.2.3", BaseURL: "https://example.test/dl/", GoVersion: "go1.26.8", Checksums: fakeSums()}
	b, err := Render(ok)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Platforms {
		for _, want := range []string{
			"os: " + p.OS + "\n        arch: " + p.Arch + "\n",
			"uri: https://example.test/dl/" + p.Archive() + "\n    sha256: " + ok.Checksums[p.Archive()] + "\n    bin: " + p.Bin() + "\n",
		} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("render lacks %q:\n%s", want, b)
			}
		}
	}
	if !bytes.Contains(b, []byte("kubectl-gate.exe")) || !bytes.Contains(b, []byte("  version: v1.2.3\n")) {
		t.Errorf("render:\n%s", b)
	}

	bad := func(name, wantErr string, mutate func(*Options)) {
		t.Run(name, func(t *testing.T) {
			o := ok
			o.Checksums = fakeSums()
			mutate(&o)
			if b, err := Render(o); err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("err = %v, want %q; output:\n%s", err, wantErr, b)
			}
		})
	}
	bad("missing checksum", "no checksum for kubectl-gate_darwin_arm64.tar.gz", func(o *Options) { delete(o.Checksums, "kubectl-gate_darwin_arm64.tar.gz") })
	bad("bad checksum", "is not a sha256", func(o *Options) { o.Checksums["kubectl-gate_linux_amd64.tar.gz"] = "abc" })
	bad("version without v", "not a semantic version", func(o *Options) { o.Version = "1.2.3" })
	bad("git describe version", "not a semantic version", func(o *Options) { o.Version = "6a33230-dirty" })
	bad("base url", "want http", func(o *Options) { o.BaseURL = "example.test/dl" })
	bad("template field", "NoSuchField", func(o *Options) { o.Template = []byte("{{.NoSuchField}}") })
}

func TestParseChecksums(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	sums, err := ParseChecksums(strings.NewReader(a + "  x.tar.gz\n" + b + " *y.tar.gz\n\n"))
	if err != nil || sums["x.tar.gz"] != a || sums["y.tar.gz"] != b || len(sums) != 2 {
		t.Fatalf("sums %v, err %v", sums, err)
	}
	for _, in := range []string{"nothex  x.tar.gz\n", a + "\n", a + "  x\n" + b + "  x\n"} {
		if _, err := ParseChecksums(strings.NewReader(in)); err == nil {
			t.Errorf("ParseChecksums(%q) accepted it", in)
		}
	}
}

// manifest is the part of a krew Plugin the tests read.
type manifest struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Version   string `yaml:"version"`
		Platforms []struct {
			URI    string `yaml:"uri"`
			SHA256 string `yaml:"sha256"`
		} `yaml:"platforms"`
	} `yaml:"spec"`
}

// TestCommittedManifest: krew/gate.yaml is the template rendered for
// v0.1.0 (only the sha256 values come from the archives), and it passes
// krew's own structural validation.
func TestCommittedManifest(t *testing.T) {
	committed := readFile(t, "gate.yaml")
	var m manifest
	if err := yaml.Unmarshal(committed, &m); err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, p := range m.Spec.Platforms {
		sums[path.Base(p.URI)] = p.SHA256
	}
	goVersion := regexp.MustCompile(`go1\.\d+(\.\d+)?`).Find(committed)
	fresh, err := Render(Options{Template: readFile(t, "gate.yaml.tmpl"), Version: committedVersion,
		BaseURL: ReleaseURL + committedVersion, GoVersion: string(goVersion), Checksums: sums})
	if err != nil {
		t.Fatalf("rendering with the committed checksums: %v", err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("krew/gate.yaml is not the template rendered for %s: run make dist krew-manifest VERSION=%s\n%s",
			committedVersion, committedVersion, firstDiff(fresh, committed))
	}
	if string(goVersion) != runtime.Version() {
		t.Logf("krew/gate.yaml's archives were built with %s, this is %s: a rebuild gives other sha256s", goVersion, runtime.Version())
	}
	validate := tool(t, "VALIDATE_KREW_MANIFEST", "validate-krew-manifest", "krew-tools")
	if r := testutil.Run(t, ".", "", nil, validate, "-skip-install", "-manifest", "gate.yaml"); r.Code != 0 {
		t.Fatalf("validate-krew-manifest -skip-install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			line := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "<end of file>"
			}
			return fmt.Sprintf("line %d:\n  rendered:  %s\n  committed: %s", i+1, line(w), line(g))
		}
	}
	return ""
}

// TestE2EKrewInstall serves the archives from a loopback file server, runs
// the full validate-krew-manifest (it downloads and installs every
// platform), installs the plugin offline with `kubectl krew install
// --archive`, and runs what krew installed, directly and as `kubectl gate`.
// With GATE_DIST_FRESH (make test after make dist) it checks all six
// platforms; otherwise it builds and checks the host's archive only.
func TestE2EKrewInstall(t *testing.T) {
	krewBin := tool(t, "KREW", "krew", "krew-tools")
	validate := tool(t, "VALIDATE_KREW_MANIFEST", "validate-krew-manifest", "krew-tools")
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	host := Platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(Platforms, host) {
		t.Skipf("no release archive for %s/%s", host.OS, host.Arch)
	}
	platforms := []Platform{host}
	if os.Getenv("GATE_DIST_FRESH") != "" {
		platforms = Platforms
	}
	var names []string
	for _, p := range platforms {
		names = append(names, p.Archive())
	}
	dist, version := distFiles(t, names...)
	sums := map[string]string{}
	for _, n := range names {
		h := sha256.Sum256(readFile(t, filepath.Join(dist, n)))
		sums[n] = hex.EncodeToString(h[:])
	}
	if os.Getenv("GATE_DIST_FRESH") != "" {
		f, err := os.Open(filepath.Join(dist, "checksums.txt"))
		if err != nil {
			t.Fatal(err)
		}
		listed, err := ParseChecksums(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for n, s := range sums {
			if listed[n] != s {
				t.Errorf("dist/checksums.txt: %s has %q, the file's sha256 is %s", n, listed[n], s)
			}
		}
	}

	for _, p := range platforms {
		checkArchive(t, filepath.Join(dist, p.Archive()), p.Bin(), p.CompletionBin())
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	defer srv.Close()
	work := t.TempDir()
	rendered, err := Render(Options{Template: readFile(t, "gate.yaml.tmpl"), Version: committedVersion,
		BaseURL: srv.URL, GoVersion: runtime.Version(), Checksums: sums, Platforms: platforms})
	if err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(work, "gate.yaml") // krew wants <plugin name>.yaml
	if err := os.WriteFile(manifestPath, rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	// kubectl dispatches `kubectl krew` to kubectl-krew on PATH.
	pathDir := filepath.Join(work, "path")
	if err := os.Mkdir(pathDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(krewBin, filepath.Join(pathDir, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	pathEnv := "PATH=" + pathDir + string(os.PathListSeparator) + os.Getenv("PATH")

	r := testutil.Run(t, work, "", []string{pathEnv}, validate, "-manifest", manifestPath)
	if r.Code != 0 {
		t.Fatalf("validate-krew-manifest (full, from %s): exit %d\n%s%s", srv.URL, r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("validate-krew-manifest: %s", lastLine(r.Stdout+r.Stderr))

	root := filepath.Join(work, "krew-root")
	env := []string{pathEnv, "KREW_ROOT=" + root, "KREW_NO_UPGRADE_CHECK=1"}
	r = testutil.Run(t, work, "", env, kubectl, "krew", "install", "--manifest="+manifestPath, "--archive="+filepath.Join(dist, host.Archive()))
	if r.Code != 0 {
		t.Fatalf("kubectl krew install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// krew's receipt (`krew list` would want a git index, offline here).
	if _, err := os.Stat(filepath.Join(root, "receipts", "gate.yaml")); err != nil {
		t.Errorf("krew kept no receipt for the plugin: %v", err)
	}
	installed := filepath.Join(root, "bin", "kubectl-gate")
	if host.OS == "windows" {
		installed += ".exe"
	}
	r = testutil.Run(t, work, "", nil, installed, "version")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != version {
		t.Errorf("%s version: exit %d, printed %q, want %q\n%s", installed, r.Code, r.Stdout, version, r.Stderr)
	}
	// Krew's bin first on PATH: `kubectl gate` is the plugin krew installed.
	viaKubectl := "PATH=" + filepath.Join(root, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	r = testutil.Run(t, work, "", []string{viaKubectl}, kubectl, "gate", "version")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != version {
		t.Errorf("kubectl gate version: exit %d, printed %q, want %q\n%s", r.Code, r.Stdout, version, r.Stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// checkArchive: the archive holds the binary, the completion executable and
// LICENSE, nothing else, in name order, with the times, owners and modes
// that make it reproducible.
func checkArchive(t *testing.T, name, bin, completion string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("%s: gzip header keeps a name or time (want gzip -n)", name)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %o %d:%d %d", h.Name, h.Mode, h.Uid, h.Gid, h.ModTime.Unix()))
		if h.Name == "LICENSE" {
			b, _ := io.ReadAll(tr)
			if !bytes.Equal(b, readFile(t, filepath.Join(testutil.Root(t), "LICENSE"))) {
				t.Errorf("%s: LICENSE is not the repository's", name)
			}
		}
	}
	want := []string{"LICENSE 644 0:0 0", bin + " 755 0:0 0", completion + " 755 0:0 0"} // tar --sort=name: byte order
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", name, got, want)
	}
}
