package signature

import (
	"encoding/json"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Cache keeps values across runs: the resolver's on-disk cache, whose
// entries are signed with a key kept outside the cache directory and
// bound to their key, so that a cache directory someone else could write
// never makes a digest pass (an entry that fails its check is a miss).
type Cache interface {
	Get(key string) ([]byte, bool)
	Put(key string, value []byte) error
}

// cachedResult is what is kept of a verified Result. Only verified results
// are kept: a digest refused today may be signed tomorrow, and a registry
// failure says nothing. What was refused beside a signature that verified
// is not kept (it changes no verdict).
type cachedResult struct {
	Signer       Signer   `json:"signer"`
	Evidence     string   `json:"evidence"`
	Via          string   `json:"via"`
	Attestations []string `json:"attestations,omitempty"`
}

// cacheKey binds a result to the policy that judged it: another key,
// identity, trusted root or attestation list is another entry.
func (v *Verifier) cacheKey(ref string) string {
	return "policy=" + v.policy.ID() + " " + ref
}

// cached returns the kept result for ref (repository@digest), if any.
func (v *Verifier) cached(ref string) (Result, bool) {
	if v.cache == nil {
		return Result{}, false
	}
	data, ok := v.cache.Get(v.cacheKey(ref))
	if !ok {
		return Result{}, false
	}
	var c cachedResult
	if json.Unmarshal(data, &c) != nil || (c.Signer.Key == "" && c.Signer.Identity == "") {
		return Result{}, false
	}
	if _, err := v1.NewHash(c.Evidence); err != nil {
		return Result{}, false
	}
	v.cacheHits.Add(1)
	return Result{Verified: true, Signer: c.Signer, Evidence: c.Evidence, Via: c.Via, Attestations: c.Attestations, Cached: true}, true
}

// keep stores a verified result; a failure to store it changes nothing.
func (v *Verifier) keep(ref string, r Result) {
	if v.cache == nil || !r.Verified {
		return
	}
	data, err := json.Marshal(cachedResult{Signer: r.Signer, Evidence: r.Evidence, Via: r.Via, Attestations: r.Attestations})
	if err != nil {
		return
	}
	_ = v.cache.Put(v.cacheKey(ref), data)
}
