package plugin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// TestE2ESignatureCache: with --cache, a second pin of signed images asks
// the registry nothing about signatures (nor, with --tag-ttl, anything at
// all), and its lock names the same signers; a cache entry changed on disk
// is not trusted (the digest is looked up again), and an entry forged for
// an unsigned image does not make it pass.
func TestE2ESignatureCache(t *testing.T) {
	reg := testutil.StartRegistry(t)
	web := testutil.Digest(t, reg.Host+"/shop/web@"+reg.PushImage(t, "shop/web:1.0"))
	api := testutil.Digest(t, reg.Host+"/shop/api@"+reg.PushImage(t, "shop/api:1.0"))
	cron := testutil.Digest(t, reg.Host+"/shop/cron@"+reg.PushImage(t, "shop/cron:1.0"))
	ci := testutil.NewSigner(t)
	ci.SignBundle(t, web, "")
	ci.PushLegacySignature(t, api, "")
	var all, sigs atomic.Int64
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		all.Add(1)
		if p := r.URL.Path; strings.Contains(p, "/referrers/") || strings.Contains(p, "/manifests/sha256-") || strings.Contains(p, "/blobs/") {
			sigs.Add(1)
		}
		next.ServeHTTP(w, r)
	}
	tag := func(repo string) string { return reg.Host + "/shop/" + repo + ":1.0" }
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	env := []string{"KUBECTL_GATE_CACHE_KEY=signature-cache-test"}
	pin := func(lock string, images ...string) (testutil.Result, int64, int64) {
		t.Helper()
		all.Store(0)
		sigs.Store(0)
		args := []string{"pin", "-f", "-", "--insecure-registry", reg.Host, "--key", ci.PubFile, "--cache", cache, "--tag-ttl", "1h"}
		if lock != "" {
			args = append(args, "--write-lock", lock)
		}
		r := testutil.Run(t, testutil.Root(t), workloads(1, images...), env, testutil.Bin(t, "kubectl-gate"), args...)
		return r, all.Load(), sigs.Load()
	}

	cold, n, s := pin(filepath.Join(dir, "cold.lock"), tag("web"), tag("api"))
	if cold.Code != 0 || s == 0 {
		t.Fatalf("cold pin: exit %d, %d signature requests\n%s%s", cold.Code, s, cold.Stdout, cold.Stderr)
	}
	t.Logf("cold: %d requests, %d for signatures", n, s)
	warm, n, s := pin(filepath.Join(dir, "warm.lock"), tag("web"), tag("api"))
	if warm.Code != 0 || n != 0 || s != 0 || warm.Stdout != cold.Stdout {
		t.Fatalf("warm pin: exit %d, %d requests (%d for signatures), want 0 and the same render\n%s%s", warm.Code, n, s, warm.Stdout, warm.Stderr)
	}
	if a, b := lockSigners(t, filepath.Join(dir, "cold.lock")), lockSigners(t, filepath.Join(dir, "warm.lock")); a != b || !strings.Contains(a, "sha256:") {
		t.Errorf("the warm lock's signers differ from the cold one's:\n%s\n---\n%s", a, b)
	}

	// Tamper with every signature entry: swap the web and api entries'
	// files. Each answers another key now; neither is trusted.
	entries, _ := filepath.Glob(filepath.Join(cache, "v2", "records-signatures", "*.json"))
	if len(entries) != 2 {
		t.Fatalf("signature cache entries %v, want 2", entries)
	}
	a, _ := os.ReadFile(entries[0])
	b, _ := os.ReadFile(entries[1])
	_ = os.WriteFile(entries[0], b, 0o600)
	_ = os.WriteFile(entries[1], a, 0o600)
	if r, _, s := pin("", tag("web"), tag("api")); r.Code != 0 || s == 0 {
		t.Errorf("swapped entries: exit %d, %d signature requests; want them looked up again\n%s", r.Code, s, r.Stderr)
	}
	// Give the unsigned cron web's entry, its key rewritten to cron's, at
	// cron's file, as someone who can write the cache but does not hold its
	// signing key would: cron is still refused.
	policy, err := signature.Load(signature.Spec{KeyFiles: []string{ci.PubFile}})
	if err != nil {
		t.Fatal(err)
	}
	webKey := "policy=" + policy.ID() + " " + web.Context().Name() + "@" + web.DigestStr()
	cronKey := "policy=" + policy.ID() + " " + cron.Context().Name() + "@" + cron.DigestStr()
	webEntry, err := os.ReadFile(filepath.Join(filepath.Dir(entries[0]), hexSHA256(webKey)+".json"))
	if err != nil {
		t.Fatalf("web's cache entry is not where its key says: %v", err)
	}
	forged := strings.Replace(string(webEntry), webKey, cronKey, 1)
	if err := os.WriteFile(filepath.Join(filepath.Dir(entries[0]), hexSHA256(cronKey)+".json"), []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _, s := pin("", tag("cron"))
	if r.Code != 1 || !strings.Contains(r.Stderr, "[image-signature]") || s == 0 {
		t.Fatalf("unsigned cron with a forged cache entry: exit %d, %d signature requests; want it looked up and refused\n%s", r.Code, s, r.Stderr)
	}
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// lockSigners returns the lock's images with their signers, one a line.
func lockSigners(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := imagelock.Parse(data)
	if err != nil {
		t.Fatalf("lock %s: %v", file, err)
	}
	var b strings.Builder
	for _, e := range lock.Spec.Images {
		if e.Signer == nil {
			t.Fatalf("lock entry %s names no signer", e.Image)
		}
		fmt.Fprintf(&b, "%s %s %s %s %s\n", e.Image, e.Digest, e.Signer.Key, e.Signer.Identity, e.SignatureBundle)
	}
	return b.String()
}

// cosign runs the real cosign CLI offline: every request to anything but
// the loopback registry goes to a proxy that is not there (Go's HTTP
// clients never proxy loopback), so a cosign that needed the public
// sigstore services (Rekor, Fulcio, TUF) would fail here.
func cosign(t *testing.T, dir string, args ...string) {
	t.Helper()
	bin := testutil.Tool(t, "COSIGN", "cosign")
	home := filepath.Join(dir, "home")
	_ = os.MkdirAll(home, 0o700)
	env := []string{"COSIGN_PASSWORD=", "HOME=" + home, "TUF_ROOT=" + filepath.Join(home, "tuf"),
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=", "https_proxy=", "http_proxy=", "no_proxy="}
	if r := testutil.Run(t, dir, "", env, bin, args...); r.Code != 0 {
		t.Fatalf("cosign %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
}

// TestE2ECosignSigned: images signed by the real cosign CLI with a key, in
// both of its formats (the legacy .sig tag; a sigstore bundle attached as
// an OCI referrer, found through the referrers API and through its tag
// fallback), pass pin --key cosign.pub and check --digest verify; another
// cosign key is refused with image-signature (exit 1).
func TestE2ECosignSigned(t *testing.T) {
	for _, c := range []struct {
		name      string
		referrers bool
	}{{"registry without the referrers API", false}, {"registry with the referrers API", true}} {
		t.Run(c.name, func(t *testing.T) {
			reg := testutil.StartRegistry(t)
			if c.referrers {
				reg = testutil.StartReferrersRegistry(t)
			}
			web := reg.Host + "/shop/web@" + reg.PushImage(t, "shop/web:1.0")
			// cosign signs by digest; its formats differ per image: web gets a
			// bundle, api the legacy .sig tag.
			api := reg.Host + "/shop/api@" + reg.PushImage(t, "shop/api:1.0")
			dir, other := t.TempDir(), t.TempDir()
			cosign(t, dir, "generate-key-pair")
			cosign(t, other, "generate-key-pair")
			flags := []string{"--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--allow-insecure-registry", "-y"}
			cosign(t, dir, append(append([]string{"sign"}, flags...), api)...)
			cosign(t, dir, append(append([]string{"sign"}, flags...), "--new-bundle-format", "--use-signing-config=false", web)...)

			var referrersAPI atomic.Int64
			reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
				if strings.Contains(r.URL.Path, "/referrers/") {
					rec := &statusRecorder{ResponseWriter: w}
					next.ServeHTTP(rec, r)
					if rec.status == http.StatusOK {
						referrersAPI.Add(1)
					}
					return
				}
				next.ServeHTTP(w, r)
			}
			lockFile := filepath.Join(dir, "gate.lock")
			render := workloads(1, reg.Host+"/shop/web:1.0", reg.Host+"/shop/api:1.0")
			r := gate(t, render, "pin", "-f", "-", "--insecure-registry", reg.Host, "--key", filepath.Join(dir, "cosign.pub"), "--write-lock", lockFile)
			if r.Code != 0 {
				t.Fatalf("pin --key of cosign-signed images: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if got := referrersAPI.Load(); (got > 0) != c.referrers {
				t.Errorf("%d answers from the referrers API, want them only where it exists", got)
			}
			key, err := signature.LoadKey(filepath.Join(dir, "cosign.pub"))
			if err != nil {
				t.Fatal(err)
			}
			signers := lockSigners(t, lockFile)
			if strings.Count(signers, key.Fingerprint) != 2 {
				t.Errorf("the lock does not name cosign.pub (%s) for both images:\n%s", key.Fingerprint, signers)
			}
			if c := gate(t, r.Stdout, "check", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--key", filepath.Join(dir, "cosign.pub")); c.Code != 0 {
				t.Errorf("check --digest verify of the pinned render: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
			}
			for _, img := range []string{reg.Host + "/shop/web:1.0", reg.Host + "/shop/api:1.0"} {
				w := gate(t, workloads(1, img), "pin", "-f", "-", "--insecure-registry", reg.Host, "--key", filepath.Join(other, "cosign.pub"))
				if w.Code != 1 || !strings.Contains(w.Stderr, "[image-signature]") {
					t.Errorf("%s with another cosign key: exit %d, want 1 with [image-signature]\n%s", img, w.Code, w.Stderr)
				}
			}
		})
	}
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// TestE2ESignatureKeyless: pin with a certificate identity and a trusted
// root file pins what the allowed identity signed keylessly (a bundle read
// through the OCI referrers API) and records the certificate's identity
// and issuer, the bundle's manifest and the trusted root's digest in the
// lock; another identity is refused with image-signature (exit 1).
func TestE2ESignatureKeyless(t *testing.T) {
	reg := testutil.StartReferrersRegistry(t)
	web := testutil.Digest(t, reg.Host+"/shop/web@"+reg.PushImage(t, "shop/web:1.0"))
	ss := testutil.NewSigstore(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const id = "https://github.com/shop/web/.github/workflows/release.yml@refs/heads/main"
	bundle := ss.SignBundle(t, web, id, issuer)
	var referrersAPI atomic.Int64
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "/referrers/") {
			referrersAPI.Add(1)
		}
		next.ServeHTTP(w, r)
	}
	rootData, _ := os.ReadFile(ss.RootFile)
	rootSum := sha256.Sum256(rootData)
	lockFile := filepath.Join(t.TempDir(), "gate.lock")
	render := workloads(1, reg.Host+"/shop/web:1.0")
	keyless := func(identity string, extra ...string) testutil.Result {
		t.Helper()
		return gate(t, render, append([]string{"pin", "-f", "-", "--insecure-registry", reg.Host,
			"--certificate-identity", identity, "--certificate-oidc-issuer", issuer, "--trusted-root", ss.RootFile}, extra...)...)
	}
	if r := keyless(id, "--write-lock", lockFile); r.Code != 0 {
		t.Fatalf("pin --certificate-identity: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if referrersAPI.Load() == 0 {
		t.Error("the referrers API was not asked")
	}
	data, _ := os.ReadFile(lockFile)
	lock, err := imagelock.Parse(data)
	if err != nil || len(lock.Spec.Images) != 1 {
		t.Fatalf("lock: %v\n%s", err, data)
	}
	e := lock.Spec.Images[0]
	if e.Signer == nil || e.Signer.Identity != id || e.Signer.Issuer != issuer || e.Signer.Key != "" ||
		e.SignatureBundle != bundle || e.TrustedRoot != "sha256:"+hex.EncodeToString(rootSum[:]) || e.Digest != web.DigestStr() {
		t.Errorf("lock entry does not record the keyless signer %s (issuer %s), bundle %s and the trusted root's digest:\n%s", id, issuer, bundle, data)
	}
	for _, field := range []string{"identity: " + id, "issuer: " + issuer, "trustedRoot: sha256:", "signatureBundle: " + bundle} {
		if !strings.Contains(string(data), field) {
			t.Errorf("the lock file lacks %q:\n%s", field, data)
		}
	}
	if r := keyless("https://github.com/mallory/web/.github/workflows/x.yml@refs/heads/main"); r.Code != 1 || !strings.Contains(r.Stderr, "[image-signature]") {
		t.Errorf("another identity: exit %d, want 1 with [image-signature]\n%s", r.Code, r.Stderr)
	}
}

// TestE2ESignatureWriteKustomization: pin --write-kustomization with a
// signer leaves the kustomization (and the lock) untouched when a
// signature is refused (exit 1) or cannot be looked up (exit 3), and
// writes the digests when every image is signed.
func TestE2ESignatureWriteKustomization(t *testing.T) {
	reg := testutil.StartRegistry(t)
	web := testutil.Digest(t, reg.Host+"/shop/web@"+reg.PushImage(t, "shop/web:1.0"))
	reg.PushImage(t, "shop/cron:1.0")
	ci := testutil.NewSigner(t)
	ci.SignBundle(t, web, "")
	deploy := func(images ...string) string { return workloads(1, images...) }
	kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy.yaml]\n"
	setup := func(t *testing.T, images ...string) (string, string) {
		t.Helper()
		dir := t.TempDir()
		_ = os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte(deploy(images...)), 0o644)
		return dir, filepath.Join(dir, "gate.lock")
	}
	// pin as the README's flow does (the render and the kustomization
	// both), and with --write-kustomization alone.
	pin := func(dir, lock string) testutil.Result {
		return gate(t, "", "pin", "-k", dir, "--write-kustomization", dir, "--insecure-registry", reg.Host, "--key", ci.PubFile, "--write-lock", lock)
	}
	pinOnly := func(dir string) testutil.Result {
		return gate(t, "", "pin", "--write-kustomization", dir, "--insecure-registry", reg.Host, "--key", ci.PubFile)
	}
	untouched := func(t *testing.T, dir, lock string) {
		t.Helper()
		if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); string(got) != kust {
			t.Errorf("kustomization.yaml was written:\n%s", got)
		}
		if _, err := os.Stat(lock); err == nil {
			t.Error("the lock was written")
		}
	}
	web10, cron10 := reg.Host+"/shop/web:1.0", reg.Host+"/shop/cron:1.0"

	t.Run("an unsigned image", func(t *testing.T) {
		dir, lock := setup(t, web10, cron10)
		r := pin(dir, lock)
		if r.Code != 1 || strings.Count(r.Stderr, "[image-signature]") != 1 {
			t.Fatalf("exit %d, want 1 with one [image-signature]\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		untouched(t, dir, lock)
		if r := pinOnly(dir); r.Code != 1 || !strings.Contains(r.Stderr, "[image-signature]") || !strings.Contains(r.Stderr, "--write-kustomization") {
			t.Fatalf("--write-kustomization alone: exit %d, want 1 with [image-signature]\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		untouched(t, dir, lock)
	})
	t.Run("the registry fails while looking", func(t *testing.T) {
		dir, lock := setup(t, web10)
		reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			if strings.Contains(r.URL.Path, "/manifests/sha256-") {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		}
		defer func() { reg.Wrap = nil }()
		r := pin(dir, lock)
		if r.Code != 3 {
			t.Fatalf("exit %d, want 3 (no verdict)\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		untouched(t, dir, lock)
		if r := pinOnly(dir); r.Code != 3 {
			t.Fatalf("--write-kustomization alone: exit %d, want 3 (no verdict)\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		untouched(t, dir, lock)
	})
	t.Run("every image signed", func(t *testing.T) {
		dir, lock := setup(t, web10)
		if r := pin(dir, lock); r.Code != 0 {
			t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); !strings.Contains(string(got), web.DigestStr()) {
			t.Errorf("kustomization.yaml lacks web's digest:\n%s", got)
		}
		if got := lockSigners(t, lock); !strings.Contains(got, web.DigestStr()) {
			t.Errorf("lock: %s", got)
		}
	})
}
