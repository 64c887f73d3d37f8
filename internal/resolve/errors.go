package resolve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ErrorKind says why a reference could not be resolved, so callers can
// branch on it (for example, to tell "not found" from "registry down").
type ErrorKind int

// The kinds of resolution failure.
const (
	// Unavailable: the registry could not be reached or kept failing
	// (connection refused, 5xx or 429 after retries, plain HTTP refused).
	Unavailable ErrorKind = iota
	// NotFound: the repository, tag, digest or platform does not exist.
	NotFound
	// Unauthorized: the registry refused the credentials, or wanted some.
	Unauthorized
	// Timeout: the overall deadline or the per-request timeout ran out.
	Timeout
	// Invalid: the reference is malformed.
	Invalid
	// Canceled: the caller's context was canceled.
	Canceled
	// Inconsistent: the registry's answer contradicts itself (a digest
	// header the body does not hash to, a Content-Type that is not a
	// manifest's or disagrees with the body, an index where an image was
	// due). Its message names the registry.
	Inconsistent
)

// String returns the kind's name in lower case, as used in messages.
func (k ErrorKind) String() string {
	switch k {
	case NotFound:
		return "not found"
	case Unauthorized:
		return "unauthorized"
	case Timeout:
		return "timeout"
	case Invalid:
		return "invalid reference"
	case Canceled:
		return "canceled"
	case Inconsistent:
		return "inconsistent answer"
	default:
		return "unavailable"
	}
}

// Error is the error of a failed resolution. Its message names the action
// and the reference exactly as given, and never holds credentials:
//
//	resolving "nginx:1.27": HEAD https://index.docker.io/v2/library/nginx/manifests/1.27: unexpected status code 401 Unauthorized …
type Error struct {
	// Ref is the reference as the caller gave it.
	Ref string
	// Kind classifies the failure.
	Kind ErrorKind
	// Err is the underlying error, with credentials redacted from its message.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("resolving %q: %v", e.Ref, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// notFoundError is a look-up that reached the registry and found nothing
// usable: no child for the platform, or a digest that does not match.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// invalidError is a malformed reference.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// deadlineError is a look-up cut short because the Resolve call's deadline
// (Options.Timeout or the caller's own) passed or its context was canceled.
type deadlineError struct {
	after time.Duration
	err   error
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("gave up after %v: %v", e.after.Round(10*time.Millisecond), e.err)
}

func (e *deadlineError) Unwrap() error { return e.err }

// classify maps an error from a look-up to its kind.
func classify(err error) ErrorKind {
	var (
		te  *transport.Error
		nf  *notFoundError
		inv *invalidError
		ie  *inconsistentError
		ne  net.Error
	)
	switch {
	case errors.As(err, &ie):
		return Inconsistent
	case errors.As(err, &inv):
		return Invalid
	case errors.As(err, &nf):
		return NotFound
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.As(err, &te):
		return classifyStatus(te)
	case errors.As(err, &ne) && ne.Timeout():
		return Timeout
	}
	return Unavailable
}

func classifyStatus(te *transport.Error) ErrorKind {
	for _, d := range te.Errors {
		switch d.Code {
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return Unauthorized
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode:
			return NotFound
		case transport.NameInvalidErrorCode, transport.TagInvalidErrorCode, transport.DigestInvalidErrorCode:
			return Invalid
		}
	}
	switch te.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return Unauthorized
	case http.StatusNotFound:
		return NotFound
	}
	return Unavailable
}

// memoizable reports whether an outcome may be kept for the Resolver's
// lifetime. Timeouts and cancellations depend on the caller's deadline, so a
// later call asks again.
func memoizable(err error) bool {
	if err == nil {
		return true
	}
	k := classify(err)
	return k != Timeout && k != Canceled
}
