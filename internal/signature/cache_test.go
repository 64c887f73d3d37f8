package signature_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
	"github.com/kubectl-gate/kubectl-gate/internal/signature"
)

// cachedVerifier is a Verifier that reads through a fresh resolver on the
// cache directory dir, as one run of the gate does, and keeps verified
// results in the resolver's signed records.
func cachedVerifier(t *testing.T, reg *testRegistry, dir string, cacheKey []byte, spec signature.Spec) (*signature.Verifier, *resolve.Resolver) {
	t.Helper()
	r, err := resolve.New(resolve.Options{CacheDir: dir, CacheKey: cacheKey, Insecure: []string{reg.host}, Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Records("signatures")
	if err != nil {
		t.Fatal(err)
	}
	p, err := signature.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.New(p, r, signature.WithCache(rec))
	if err != nil {
		t.Fatal(err)
	}
	return v, r
}

// TestCacheAcrossRuns: a second run answers verified digests from the
// cache with no registry request at all; a refused digest is looked up
// again (it may be signed since); another policy does not reuse the
// verdict; a cache entry someone changed, or forged for an unsigned
// digest, is never trusted (rejected, counted and looked up again).
func TestCacheAcrossRuns(t *testing.T) {
	reg := newRegistry(t, true)
	web, api, cron := reg.push(t, "shop/web"), reg.push(t, "shop/api"), reg.push(t, "shop/cron")
	kp, pub := ephemeral(t)
	pushReferrer(t, web, signature.BundleMediaType, keyBundle(t, kp, web, signature.CosignSignPredicate))
	legacyKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pushLegacy(t, api, api.DigestStr(), legacyKey)
	spec := signature.Spec{KeyFiles: []string{pub, keyFile(t, legacyKey.Public())}}
	dir, key := t.TempDir(), bytes.Repeat([]byte{1}, 32)
	ctx := context.Background()

	// run verifies refs with a fresh verifier and returns the results and
	// the registry requests it made.
	run := func(spec signature.Spec, refs ...string) ([]signature.Result, int64, resolve.Stats) {
		t.Helper()
		v, r := cachedVerifier(t, reg, dir, key, spec)
		before := reg.all.Load()
		var out []signature.Result
		for _, ref := range refs {
			out = append(out, v.Verify(ctx, ref))
		}
		return out, reg.all.Load() - before, r.Stats()
	}

	cold, n, _ := run(spec, web.String(), api.String(), cron.String())
	if !cold[0].Verified || !cold[1].Verified || cold[2].Verified || cold[2].Err != nil {
		t.Fatalf("cold run: want web and api verified and cron refused, got %+v", cold)
	}
	if n == 0 || cold[0].Cached || cold[1].Cached {
		t.Fatalf("cold run: %d requests, cached %v %v: want registry look-ups", n, cold[0].Cached, cold[1].Cached)
	}

	warm, n, st := run(spec, web.String(), api.String())
	if n != 0 {
		t.Errorf("warm run: %d registry requests for two verified digests, want 0", n)
	}
	for i, r := range warm {
		if !r.Verified || !r.Cached || r.Signer != cold[i].Signer || r.Evidence != cold[i].Evidence || r.Via != cold[i].Via {
			t.Errorf("warm run: got %+v, want the cold result %+v from the cache", r, cold[i])
		}
	}
	if st.CacheHits != 2 || st.CacheRejects != 0 {
		t.Errorf("warm run: resolver stats %+v, want two cache hits", st)
	}

	if res, n, _ := run(spec, cron.String()); res[0].Verified || n == 0 {
		t.Errorf("a refused digest: %d requests, verified %v; want it looked up again and refused", n, res[0].Verified)
	}
	_, other := ephemeral(t)
	if res, n, _ := run(signature.Spec{KeyFiles: []string{other}}, web.String()); res[0].Verified || res[0].Cached || n == 0 {
		t.Errorf("another key: %d requests, got %+v; the cached verdict of another policy must not count", n, res[0])
	}

	// The entries on disk: one per verified digest.
	entries, _ := filepath.Glob(filepath.Join(dir, "v2", "records-signatures", "*.json"))
	if len(entries) != 2 {
		t.Fatalf("%d cache entries %v, want 2 (web and api)", len(entries), entries)
	}
	web0 := entryFor(t, entries, web.String())

	// A changed entry: its signer rewritten, its MAC left. It is rejected
	// and web is looked up again (and still verified, by its real signer).
	orig, _ := os.ReadFile(web0)
	var e map[string]any
	if err := json.Unmarshal(orig, &e); err != nil {
		t.Fatal(err)
	}
	e["value"] = []byte(strings.Replace(valueOf(t, orig), cold[0].Signer.Key, "sha256:"+strings.Repeat("0", 64), 1))
	changed, _ := json.Marshal(e)
	if err := os.WriteFile(web0, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	res, n, st := run(spec, web.String())
	if !res[0].Verified || res[0].Cached || res[0].Signer != cold[0].Signer || n == 0 || st.CacheRejects != 1 {
		t.Errorf("a changed entry: %d requests, stats %+v, got %+v; want it rejected and web looked up again", n, st, res[0])
	}

	// A forged entry for the unsigned cron: web's entry, its key changed to
	// cron's, written at cron's file. Never trusted.
	e["key"] = strings.Replace(e["key"].(string), web.String(), cron.String(), 1)
	e["value"] = []byte(valueOf(t, orig))
	forged, _ := json.Marshal(e)
	cronFile := filepath.Join(filepath.Dir(web0), sha256Hex(e["key"].(string))+".json")
	if err := os.WriteFile(cronFile, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	res, n, st = run(spec, cron.String())
	if res[0].Verified || res[0].Cached || n == 0 || st.CacheRejects != 1 {
		t.Errorf("a forged entry for an unsigned digest: %d requests, stats %+v, got %+v; want it rejected and cron refused", n, st, res[0])
	}
}

// entryFor returns the cache entry file whose key names ref.
func entryFor(t *testing.T, files []string, ref string) string {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Key string }
		if json.Unmarshal(data, &e) == nil && strings.HasSuffix(e.Key, " "+ref) {
			return f
		}
	}
	t.Fatalf("no cache entry for %s in %v", ref, files)
	return ""
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func valueOf(t *testing.T, entry []byte) string {
	t.Helper()
	var e struct{ Value []byte }
	if err := json.Unmarshal(entry, &e); err != nil {
		t.Fatal(err)
	}
	return string(e.Value)
}
