package krew

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const resourceList = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: kubectl-gate.dev/v1alpha1
  kind: Gate
  metadata:
    name: contract
  spec:
    images:
      digest: require
      allowedRegistries: [ghcr.io]
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: shop
  spec:
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: web
          image: IMAGE
`

const pinned = "ghcr.io/example-shop/web:1.4.2@sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"

// TestE2EGateFnImageEntrypoint checks the image's entrypoint contract with
// the binary the image holds (make dist-fn, the Dockerfile's build): static,
// and, run as kustomize runs a container function — as nobody, with no
// environment, no writable home, in / — a ResourceList in gives items: []
// and exit 0 on a good render, results and a non-zero exit on a bad image.
func TestE2EGateFnImageEntrypoint(t *testing.T) {
	name := "gate-fn_linux_" + runtime.GOARCH
	dist, _ := distFiles(t, name)
	bin := filepath.Join(dist, name)

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: not static", name)
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Errorf("%s links shared libraries %v: distroless/static has none", name, libs)
	}

	// A directory nobody can read, as the image's / is.
	dir, err := os.MkdirTemp("", "gate-fn-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	entry := filepath.Join(dir, "gate-fn")
	copyFile(t, bin, entry)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	good := run(t, entry, strings.Replace(resourceList, "IMAGE", pinned, 1))
	if good.Code != 0 {
		t.Fatalf("good input: exit %d\n%s", good.Code, good.Stderr)
	}
	rl := parseRL(t, good.Stdout)
	if items, _ := rl.Pipe(yaml.Lookup("items")); items == nil || items.YNode().Kind != yaml.SequenceNode || len(items.Content()) != 0 {
		t.Errorf("good input: want items: [] (a validator's only accepted output):\n%s", good.Stdout)
	}

	bad := run(t, entry, strings.Replace(resourceList, "IMAGE", "ghcr.io/example-shop/web:latest", 1))
	if bad.Code == 0 {
		t.Fatalf("bad image: exit 0\n%s", bad.Stdout)
	}
	if !strings.Contains(bad.Stderr, "ERROR [image-digest] Deployment/web") {
		t.Errorf("bad image: stderr lacks the finding:\n%s", bad.Stderr)
	}
	results, _ := parseRL(t, bad.Stdout).Pipe(yaml.Lookup("results"))
	if results == nil || !strings.Contains(results.MustString(), "rule: image-digest") || !strings.Contains(results.MustString(), "severity: error") {
		t.Errorf("bad image: no error result for image-digest:\n%s", bad.Stdout)
	}
}

// run starts the binary as kustomize starts a container function: uid and
// gid nobody (when this test may switch users), empty environment but a
// HOME that does not exist, working directory /.
func run(t *testing.T, bin, stdin string) testutil.Result {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env = "/", []string{"HOME=/nonexistent"}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var out, errb strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	r := testutil.Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", bin, err)
	}
	return r
}

func parseRL(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	if err != nil || n.GetKind() != "ResourceList" {
		t.Fatalf("output is no ResourceList (%v):\n%s", err, s)
	}
	return n
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b := readFile(t, from)
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
