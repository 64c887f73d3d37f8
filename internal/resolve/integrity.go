package resolve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"
)

// maxManifest bounds a manifest body read by the integrity check; the OCI
// distribution spec asks registries to accept at least 4 MiB.
const maxManifest = 4 << 20

// integrity checks every manifest answer before go-containerregistry sees
// it: the Content-Type must be a manifest or index media type, a body must
// hash to the Docker-Content-Digest header (go-containerregistry trusts the
// header for tags, see kaniko#298 in its fetcher), and a body's own
// mediaType must agree with the Content-Type. A registry or mirror that
// lies in one of them gets no answer used: the look-up fails as
// [Inconsistent], which is no verdict.
type integrity struct{ next http.RoundTripper }

// inconsistentError is an answer whose parts disagree.
type inconsistentError struct{ registry, msg string }

func (e *inconsistentError) Error() string {
	return fmt.Sprintf("registry %s answered inconsistently: %s", e.registry, e.msg)
}

func (t *integrity) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !isManifestPath(req.URL.Path) {
		return resp, err
	}
	if err := t.check(req, resp); err != nil {
		discard(resp)
		return nil, err
	}
	return resp, nil
}

func (t *integrity) check(req *http.Request, resp *http.Response) error {
	bad := func(format string, args ...any) error {
		return &inconsistentError{registry: req.URL.Host, msg: fmt.Sprintf(format, args...)}
	}
	ct := contentType(resp.Header.Get("Content-Type"))
	if !knownManifestType(ct) {
		return bad("%s %s: Content-Type %q is not a manifest media type", req.Method, req.URL.Path, ct)
	}
	if req.Method != http.MethodGet {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxManifest+1))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading manifest from %s: %w", req.URL.Host, err)
	}
	if len(body) > maxManifest {
		return bad("GET %s: manifest larger than %d bytes", req.URL.Path, maxManifest)
	}
	sum := sha256.Sum256(body)
	got := "sha256:" + hex.EncodeToString(sum[:])
	if h := resp.Header.Get("Docker-Content-Digest"); h != "" && h != got {
		return bad("GET %s: Docker-Content-Digest %s but the body hashes to %s", req.URL.Path, h, got)
	}
	if mt := bodyMediaType(body); mt != "" && mt != ct {
		return bad("GET %s: Content-Type %q but the body says mediaType %q", req.URL.Path, ct, mt)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return nil
}

// contentType drops parameters ("; charset=utf-8") from a Content-Type.
func contentType(h string) string {
	mt, _, _ := strings.Cut(h, ";")
	return strings.TrimSpace(mt)
}

func knownManifestType(mt string) bool {
	switch types.MediaType(mt) {
	case types.OCIManifestSchema1, types.OCIImageIndex, types.DockerManifestSchema2,
		types.DockerManifestList, types.DockerManifestSchema1, types.DockerManifestSchema1Signed:
		return true
	}
	return false
}

// shape is what a manifest body says about itself.
type shape struct {
	MediaType string            `json:"mediaType"`
	Manifests []json.RawMessage `json:"manifests"`
	Config    json.RawMessage   `json:"config"`
}

func bodyMediaType(body []byte) string {
	var s shape
	if json.Unmarshal(body, &s) != nil {
		return ""
	}
	return s.MediaType
}

// isIndexBody reports whether a manifest body is an index, judged from the
// body alone (its mediaType, else the presence of manifests), never from a
// header a registry could get wrong.
func isIndexBody(body []byte) (bool, error) {
	var s shape
	if err := json.Unmarshal(body, &s); err != nil {
		return false, fmt.Errorf("parsing manifest: %w", err)
	}
	if s.MediaType != "" {
		return types.MediaType(s.MediaType).IsIndex(), nil
	}
	return s.Manifests != nil && s.Config == nil, nil
}
