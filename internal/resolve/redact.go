package resolve

import (
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// redacted replaces a credential in error messages.
const redacted = "[REDACTED]"

// minSecretLen keeps very short "secrets" (an empty or one-letter password)
// from shredding every message they happen to occur in.
const minSecretLen = 4

// secrets remembers every credential this Resolver has put on the wire, so
// that no error message can carry one back out — not even when a registry or
// token server echoes the request in its error body.
type secrets struct {
	mu  sync.RWMutex
	set map[string]struct{}
}

func newSecrets() *secrets { return &secrets{set: map[string]struct{}{}} }

// record notes the credentials carried by an outgoing request: the
// Authorization header (and, for Basic, the decoded user:password and the
// password alone) and the password or refresh token of an OAuth2 form body.
func (s *secrets) record(req *http.Request) {
	if v := req.Header.Get("Authorization"); v != "" {
		s.add(v)
		s.recordAuthorization(v)
	}
	s.recordForm(req)
}

func (s *secrets) recordAuthorization(v string) {
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		return
	}
	s.add(cred)
	if !strings.EqualFold(scheme, "basic") {
		return
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return
	}
	s.add(string(raw))
	if _, pass, ok := strings.Cut(string(raw), ":"); ok {
		s.add(pass)
		s.add(url.QueryEscape(pass))
	}
}

func (s *secrets) recordForm(req *http.Request) {
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if req.Method != http.MethodPost || req.GetBody == nil || ct != "application/x-www-form-urlencoded" {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return
	}
	for _, k := range []string{"password", "refresh_token", "access_token"} {
		if v := form.Get(k); v != "" {
			s.add(v)
			s.add(url.QueryEscape(v))
		}
	}
}

func (s *secrets) add(v string) {
	if len(v) < minSecretLen {
		return
	}
	s.mu.RLock()
	_, ok := s.set[v]
	s.mu.RUnlock()
	if ok {
		return
	}
	s.mu.Lock()
	s.set[v] = struct{}{}
	s.mu.Unlock()
}

// scrub returns msg with every known credential replaced, longest first so
// that a password inside a recorded "user:password" is caught either way.
func (s *secrets) scrub(msg string) string {
	s.mu.RLock()
	list := make([]string, 0, len(s.set))
	for v := range s.set {
		if strings.Contains(msg, v) {
			list = append(list, v)
		}
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	for _, v := range list {
		msg = strings.ReplaceAll(msg, v, redacted)
	}
	return msg
}

// redactedError carries an error whose message has been scrubbed; errors.Is
// and errors.As still see the original chain.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func (s *secrets) wrap(err error) error {
	return &redactedError{msg: s.scrub(err.Error()), err: err}
}
