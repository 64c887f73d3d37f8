// Package signature verifies that an image digest was signed by an allowed
// signer, with sigstore-go, asking nothing of the network but the image's
// own registry.
//
// A [Policy] says who may sign: cosign public keys ([Policy.Keys]), and
// certificate identities and OIDC issuers ([Policy.Identities], exact or
// regular expressions) checked against a sigstore trusted root read from a
// file ([Policy.TrustedRoot]; there is no TUF fetch). It may also require
// attestations of given in-toto predicate types.
//
// A [Verifier] looks for signatures of repository@digest in this order:
//
//  1. the OCI referrers API, for sigstore bundles
//     (application/vnd.dev.sigstore.bundle.v0.3+json); each referrer's
//     manifest is read, never judged by the index's artifactType alone,
//     and its subject must be the digest;
//  2. the referrers tag fallback (sha256-<hex>), which go-containerregistry's
//     remote.Referrers reads when the registry has no referrers API;
//  3. cosign's legacy sha256-<hex>.sig tag: simple-signing payloads whose
//     critical.image.docker-manifest-digest must be the digest, signed by
//     an allowed key, or keylessly (a certificate and a transparency-log
//     entry in the layer's annotations, verified as the v0.1 bundle they
//     make).
//
// Bundles are verified by sigstore-go's verify package: a DSSE in-toto
// statement whose subject is the digest. A key-signed bundle needs no
// timestamp (the key is trusted as configured); a certificate-signed one
// needs a verified transparency-log entry and observer timestamp from the
// trusted root, and an SCT when the root lists CT logs. Revocation cannot
// be known offline and is not checked.
//
// Every digest gets a [Result]: verified (with the signer and the evidence),
// refused (each signature found and why it did not count), or a lookup
// error (registry or trusted-root failure: no verdict). Each unique
// repository@digest is looked up once for the Verifier's lifetime.
package signature
