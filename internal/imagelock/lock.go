package imagelock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// APIVersion and Kind name an ImageLock object.
const (
	APIVersion = "kubectl-gate.dev/v1alpha1"
	Kind       = "ImageLock"
)

// MaxBytes bounds a lock file the shells read: ~200 bytes an entry leaves
// room for tens of thousands of images.
const MaxBytes = 8 << 20

// localConfig is kustomize's annotation for objects it hands to functions
// and never emits.
const localConfig = "config.kubernetes.io/local-config"

// Lock is an ImageLock object: what `pin --write-lock` resolved (and
// verified), for offline checks to hold a render to.
type Lock struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Metadata is kept as written: kustomize may add a namespace, labels
	// and annotations to an ImageLock in the render.
	Metadata map[string]any `json:"metadata,omitempty"`
	Spec     Spec           `json:"spec"`
}

// Spec holds the lock's entries.
type Spec struct {
	Images []Entry `json:"images"`
}

// Entry is one image reference as a render wrote it and what it was pinned to.
type Entry struct {
	// Image is the reference as written, without digest: "ghcr.io/shop/web:1.4.2".
	Image string `json:"image"`
	// Digest is what Image was pinned to.
	Digest string `json:"digest"`
	// Platform ("linux/arm64") is set when the tag was resolved for one
	// platform (an index narrowed to its child manifest).
	Platform string `json:"platform,omitempty"`
	// Signer is who signed Digest, when pin verified signatures.
	Signer *Signer `json:"signer,omitempty"`
	// SignatureBundle is the digest of the signature (bundle or legacy
	// signature manifest) that verified, when pin verified signatures.
	SignatureBundle string `json:"signatureBundle,omitempty"`
	// TrustedRoot is the digest of the trusted root file keyless
	// signatures were verified against.
	TrustedRoot string `json:"trustedRoot,omitempty"`
	// Resolved is when the tag was resolved (RFC 3339, UTC).
	Resolved string `json:"resolved,omitempty"`
}

// Signer names who signed: a public key by its fingerprint, or a
// certificate's identity and issuer.
type Signer struct {
	// Key is the SHA-256 fingerprint of the public key ("sha256:…" of its
	// DER SubjectPublicKeyInfo).
	Key string `json:"key,omitempty"`
	// Identity is the certificate's subject alternative name.
	Identity string `json:"identity,omitempty"`
	// Issuer is the certificate's OIDC issuer.
	Issuer string `json:"issuer,omitempty"`
}

// Parse decodes an ImageLock strictly: an unknown or misspelt field is an
// error (a typo must not drop an entry's check), and so is an entry whose
// image, digest, platform or time does not parse, or an image given twice
// for one platform.
func Parse(data []byte) (*Lock, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("image lock is larger than %d bytes", MaxBytes)
	}
	if n, err := documents(data); err != nil {
		return nil, fmt.Errorf("decoding image lock: %w", err)
	} else if n != 1 {
		return nil, fmt.Errorf("image lock: want one ImageLock object, got %d YAML documents", n)
	}
	var l Lock
	if err := sigsyaml.UnmarshalStrict(data, &l); err != nil {
		return nil, fmt.Errorf("decoding image lock: %s", cleanError(err))
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &l, nil
}

// FromMap decodes an ImageLock given as a decoded object (an inline
// spec.images.lock, an object of the render), as Parse does.
func FromMap(m map[string]any) (*Lock, error) {
	data, err := sigsyaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding image lock: %w", err)
	}
	return Parse(data)
}

// documents counts the YAML documents of data (empty ones left out).
func documents(data []byte) (int, error) {
	d := yaml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var node yaml.Node
		err := d.Decode(&node)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(node.Content) > 0 && node.Content[0].Kind != 0 {
			n++
		}
	}
}

// cleanError keeps the part of sigs.k8s.io/yaml's message that names the field.
func cleanError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "json: "); i >= 0 {
		s = s[i+len("json: "):]
	}
	return s
}

// Validate checks the object's type and every entry; an error names the
// entry by its place (spec.images[3]).
func (l *Lock) Validate() error {
	if l.APIVersion != APIVersion || l.Kind != Kind {
		return fmt.Errorf("image lock: %s %s is not %s %s", l.APIVersion, l.Kind, APIVersion, Kind)
	}
	var errs []error
	seen := map[string]int{}
	for i, e := range l.Spec.Images {
		if err := e.validate(); err != nil {
			errs = append(errs, fmt.Errorf("spec.images[%d]: %w", i, err))
			continue
		}
		k := e.key()
		if j, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("spec.images[%d]: %s (platform %q) is locked already in spec.images[%d]", i, e.Image, e.Platform, j))
			continue
		}
		seen[k] = i
	}
	return errors.Join(errs...)
}

func (e Entry) validate() error {
	r, ok := parseRef(e.Image)
	switch {
	case e.Image == "":
		return errors.New("image: required")
	case !ok:
		return fmt.Errorf("image: %q is not a valid image reference", e.Image)
	case r.digest != "":
		return fmt.Errorf("image: %q carries a digest: write the tag as the render does and the digest in digest:", e.Image)
	case e.Digest == "":
		return errors.New("digest: required")
	}
	if !(ref{digest: e.Digest}).validDigest() {
		return fmt.Errorf("digest: %q is not sha256:<64 hex>", e.Digest)
	}
	if e.Platform != "" {
		if p, err := v1.ParsePlatform(e.Platform); err != nil || p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("platform: %q is not os/arch[/variant]", e.Platform)
		}
	}
	if e.Resolved != "" {
		if _, err := time.Parse(time.RFC3339, e.Resolved); err != nil {
			return fmt.Errorf("resolved: %q is not an RFC 3339 time", e.Resolved)
		}
	}
	for _, d := range []struct{ field, v string }{{"signatureBundle", e.SignatureBundle}, {"trustedRoot", e.TrustedRoot}} {
		if _, err := v1.NewHash(d.v); d.v != "" && err != nil {
			return fmt.Errorf("%s: %q is not a digest", d.field, d.v)
		}
	}
	return nil
}

// key identifies an entry: its normalized repository and tag, and platform.
func (e Entry) key() string {
	r, _ := parseRef(e.Image)
	return r.repo + ":" + r.tagOrLatest() + "|" + e.Platform
}

// Sort orders the entries by image, then platform: the order Marshal writes.
func (l *Lock) Sort() {
	slices.SortFunc(l.Spec.Images, func(a, b Entry) int {
		if c := strings.Compare(a.Image, b.Image); c != 0 {
			return c
		}
		return strings.Compare(a.Platform, b.Platform)
	})
}

// New returns an empty lock named name, annotated as local config so that
// kustomize hands it to functions and never emits it.
func New(name string) *Lock {
	return &Lock{APIVersion: APIVersion, Kind: Kind, Metadata: map[string]any{
		"name":        name,
		"annotations": map[string]any{localConfig: "true"},
	}}
}

// Marshal writes the lock as YAML, entries sorted, one field a line: a
// re-pin that changes one digest changes one line.
func (l *Lock) Marshal() ([]byte, error) {
	c := *l
	c.Spec.Images = slices.Clone(l.Spec.Images)
	c.Sort()
	if c.Spec.Images == nil {
		c.Spec.Images = []Entry{}
	}
	out, err := sigsyaml.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encoding image lock: %w", err)
	}
	return append([]byte("# Written by kubectl gate pin --write-lock; checked by kubectl gate check --lock.\n"), out...), nil
}
