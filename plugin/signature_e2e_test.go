package plugin_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/signature"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2ESignatures: pin --key pins only what an allowed key signed (a
// bundle found through the referrers tag, a legacy .sig), records the
// signer in the lock, and refuses an unsigned image, another key's
// signature and a signature replayed from another image; check --digest
// verify judges the same; a registry failure while looking is no verdict;
// spec.images.signatures is the flags' twin.
func TestE2ESignatures(t *testing.T) {
	reg := testutil.StartRegistry(t)
	web := testutil.Digest(t, reg.Host+"/shop/web@"+reg.PushImage(t, "shop/web:1.0"))
	api := testutil.Digest(t, reg.Host+"/shop/api@"+reg.PushImage(t, "shop/api:1.0"))
	unsigned := testutil.Digest(t, reg.Host+"/shop/cron@"+reg.PushImage(t, "shop/cron:1.0"))
	replayed := testutil.Digest(t, reg.Host+"/shop/batch@"+reg.PushImage(t, "shop/batch:1.0"))
	other := testutil.Digest(t, reg.Host+"/shop/worker@"+reg.PushImage(t, "shop/worker:1.0"))

	ci, mallory := testutil.NewSigner(t), testutil.NewSigner(t)
	bundle := ci.SignBundle(t, web, "")
	ci.PushLegacySignature(t, api, "")
	ci.PushLegacySignature(t, replayed, web.DigestStr()) // web's payload under batch's tag
	mallory.SignBundle(t, other, "")
	key, err := signature.LoadKey(ci.PubFile)
	if err != nil {
		t.Fatal(err)
	}
	tag := func(repo string) string { return reg.Host + "/shop/" + repo + ":1.0" }
	dir := t.TempDir()
	lockFile := filepath.Join(dir, "gate.lock")

	r := gate(t, workloads(2, tag("web"), tag("api")), "pin", "-f", "-", "--insecure-registry", reg.Host, "--key", ci.PubFile, "--write-lock", lockFile)
	if r.Code != 0 {
		t.Fatalf("pin --key of signed images: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	data, _ := os.ReadFile(lockFile)
	lock, err := imagelock.Parse(data)
	if err != nil {
		t.Fatalf("lock: %v\n%s", err, data)
	}
	for _, e := range lock.Spec.Images {
		if e.Signer == nil || e.Signer.Key != key.Fingerprint || e.SignatureBundle == "" {
			t.Errorf("lock entry %s does not name its signer %s:\n%s", e.Image, key.Fingerprint, data)
		}
		if e.Image == tag("web") && e.SignatureBundle != bundle {
			t.Errorf("web's evidence is %s, want the bundle's referrer %s", e.SignatureBundle, bundle)
		}
	}
	pinned := r.Stdout

	red := []struct {
		name, image, says string
	}{
		{"unsigned", tag("cron"), "no signature found"},
		{"signed by another key", tag("worker"), "failed to verify signature"},
		{"a signature replayed from another image", tag("batch"), "not this digest"},
	}
	for _, c := range red {
		t.Run(c.name, func(t *testing.T) {
			got := gate(t, workloads(1, c.image), "pin", "-f", "-", "--insecure-registry", reg.Host, "--key", ci.PubFile)
			// pin writes the render to stdout and its report to stderr.
			if got.Code != 1 || !strings.Contains(got.Stderr, "[image-signature]") || !strings.Contains(got.Stderr, c.says) {
				t.Fatalf("exit %d, want 1 with [image-signature] %q\n%s%s", got.Code, c.says, got.Stdout, got.Stderr)
			}
		})
	}

	// check --digest verify judges the pinned render the same way, and a
	// key that did not sign it refuses it.
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--key", ci.PubFile); c.Code != 0 {
		t.Fatalf("check --digest verify --key: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--key", mallory.PubFile); c.Code != 1 || !strings.Contains(c.Stdout, "[image-signature]") {
		t.Fatalf("check with another key: exit %d, want 1\n%s%s", c.Code, c.Stdout, c.Stderr)
	}

	// The config twin, its key relative to the config file.
	cfgDir := t.TempDir()
	pub, _ := os.ReadFile(ci.PubFile)
	_ = os.WriteFile(filepath.Join(cfgDir, "ci.pub"), pub, 0o600)
	cfg := filepath.Join(cfgDir, "gate.yaml")
	_ = os.WriteFile(cfg, []byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  images:\n    digest: verify\n    insecureRegistries: ["+reg.Host+"]\n    signatures:\n      keys: [ci.pub]\n"), 0o644)
	if c := gate(t, pinned, "check", "-f", "-", "--config", cfg); c.Code != 0 {
		t.Fatalf("check --config with spec.images.signatures.keys: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	if c := gate(t, workloads(1, tag("cron")+"@"+unsigned.DigestStr()), "check", "-f", "-", "--config", cfg); c.Code != 1 || !strings.Contains(c.Stdout, "[image-signature]") {
		t.Fatalf("check --config of an unsigned digest: exit %d, want 1\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	// The same config offline (--digest require looks nothing up): the
	// unsigned digest passes, and the report says no signature was looked up.
	if c := gate(t, workloads(1, tag("cron")+"@"+unsigned.DigestStr()), "check", "-f", "-", "--config", cfg, "--digest", "require"); c.Code != 0 || !strings.Contains(c.Stdout, "not checked: signers are configured") {
		t.Errorf("check --config --digest require: exit %d, want 0 and a not-checked notice\n%s%s", c.Code, c.Stdout, c.Stderr)
	}

	// Usage: signers on check without --digest verify (nothing would be
	// verified), an identity without a trusted root, a key file that is not one.
	if c := gate(t, pinned, "check", "-f", "-", "--key", ci.PubFile); c.Code != 2 {
		t.Errorf("check --key without --digest verify: exit %d, want 2\n%s", c.Code, c.Stderr)
	}
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--certificate-identity", "ci@shop.example", "--certificate-oidc-issuer", "https://issuer.example"); c.Code != 2 {
		t.Errorf("an identity without --trusted-root: exit %d, want 2\n%s", c.Code, c.Stderr)
	}
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--key", cfg); c.Code != 2 {
		t.Errorf("--key naming a file that is no key: exit %d, want 2\n%s", c.Code, c.Stderr)
	}
	// No verdict: a trusted root that cannot be read; a registry that
	// fails while signatures are looked for.
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--certificate-identity", "ci@shop.example", "--certificate-oidc-issuer", "https://issuer.example", "--trusted-root", filepath.Join(dir, "missing.json")); c.Code != 3 {
		t.Errorf("an unreadable trusted root: exit %d, want 3\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "/manifests/sha256-") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	}
	if c := gate(t, pinned, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--key", ci.PubFile); c.Code != 3 {
		t.Errorf("the registry failing on the referrers tag: exit %d, want 3\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
}
