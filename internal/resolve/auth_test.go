package resolve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
)

const bearerToken = "tok-9f8e7d6c5b4a-bearer"

// tokenAuth fronts the registry with a bearer token service, as Docker Hub,
// GHCR and Harbor do: /v2/ challenges to /token, which trades user:pass
// (basic auth) for a token. A careless token service, it echoes the
// credentials it was sent in its 401 body; the resolver must scrub them.
func tokenAuth(user, pass string, tokens *atomic.Int64) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				tokens.Add(1)
				serveToken(w, r, user, pass)
				return
			}
			if r.Header.Get("Authorization") != "Bearer "+bearerToken {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="test"`, r.Host))
				http.Error(w, "sent: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func serveToken(w http.ResponseWriter, r *http.Request, user, pass string) {
	u, p, ok := r.BasicAuth()
	if !ok || u != user || p != pass {
		msg := fmt.Sprintf("bad credentials: Authorization=%q user=%q password=%q", r.Header.Get("Authorization"), u, p)
		http.Error(w, msg, http.StatusUnauthorized)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"token": bearerToken})
}

// dockerConfig writes a docker config holding user:pass for host and points
// DOCKER_CONFIG at it, so that authn.DefaultKeychain reads it like a CI
// runner's would.
func dockerConfig(t *testing.T, host, user, pass string) {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	cfg := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, host, auth)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// secretsOf lists every form a credential could take in a message.
func secretsOf(user, pass string) []string {
	return []string{pass, user + ":" + pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)), bearerToken}
}

func assertNoSecrets(t *testing.T, msg string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("credential %q appears in %q", s, msg)
		}
	}
}

// Not parallel: it sets DOCKER_CONFIG for authn.DefaultKeychain.
func TestDockerConfigPasswordNeverInErrors(t *testing.T) {
	const user, pass, wrong = "ci-bot", "hunter2-from-config", "not-the-password"
	var tokens atomic.Int64
	tr := newRegistry(t, tokenAuth(user, wrong, &tokens))
	tr.pushImage(t, "app:1")
	dockerConfig(t, tr.host, user, pass)
	r := newResolver(t, tr, Options{Keychain: authn.DefaultKeychain})

	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})

	e := wantKind(t, got, tr.ref("app:1"), Unauthorized)
	for _, msg := range []string{e.Error(), e.Err.Error(), fmt.Sprint(got), fmt.Sprintf("%+v", got)} {
		assertNoSecrets(t, msg, secretsOf(user, pass))
	}
	// The token service did echo the credentials: they were scrubbed, not absent.
	if !strings.Contains(e.Error(), redacted) {
		t.Errorf("want the echoed credentials redacted in %q", e)
	}
	t.Log(e)
}

func TestBearerTokenOncePerRepository(t *testing.T) {
	t.Parallel()
	const user, pass = "ci-bot", "s3cret-pass"
	var tokens atomic.Int64
	tr := newRegistry(t, tokenAuth(user, pass, &tokens))
	var tags, refs []string
	for i := range 10 {
		tags = append(tags, fmt.Sprintf("app%d:%d", i%2, i))
	}
	want := tr.pushImages(t, tags)
	for _, tag := range tags {
		refs = append(refs, tr.ref(tag))
	}
	r := newResolver(t, tr, Options{Keychain: keychain{tr.host: &authn.Basic{Username: user, Password: pass}}})

	got := r.Resolve(ctxT(t), refs)

	for _, tag := range tags {
		wantDigest(t, got, tr.ref(tag), want[tag])
	}
	if n := tokens.Load(); n != 2 {
		t.Errorf("token fetches = %d, want 2 (one per repository)", n)
	}
	if n := tr.manifests.Load(); n != 10 {
		t.Errorf("manifest requests = %d, want 10", n)
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	const user, pass = "ci-bot", "basic-pass-123"
	tr := newRegistry(t, requireBasic(user, pass))
	d := tr.pushImage(t, "app:1")
	ref := tr.ref("app:1")

	for _, c := range []struct {
		name string
		auth authn.Authenticator
	}{
		{"anonymous", authn.Anonymous},
		{"wrong password", &authn.Basic{Username: user, Password: "basic-pass-WRONG"}},
	} {
		r := newResolver(t, tr, Options{Keychain: keychain{tr.host: c.auth}})
		got := r.Resolve(ctxT(t), []string{ref})
		e := wantKind(t, got, ref, Unauthorized)
		assertNoSecrets(t, e.Error(), append(secretsOf(user, pass), "basic-pass-WRONG"))
	}

	r := newResolver(t, tr, Options{Keychain: keychain{tr.host: &authn.Basic{Username: user, Password: pass}}})
	wantDigest(t, r.Resolve(ctxT(t), []string{ref}), ref, d)
}
