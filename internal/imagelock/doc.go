// Package imagelock reads, writes and checks ImageLock objects: the record
// `kubectl gate pin --write-lock` keeps of what each image reference was
// pinned to (and, when signatures were verified, who signed it), which
// `check --lock`, an ImageLock in the render and the KRM function hold a
// render to with no registry call.
//
//	apiVersion: kubectl-gate.dev/v1alpha1
//	kind: ImageLock
//	metadata:
//	  name: images
//	  annotations: {config.kubernetes.io/local-config: "true"}
//	spec:
//	  images:
//	  - image: ghcr.io/shop/web:1.4.2
//	    digest: sha256:4315c8fd…
//	    resolved: "2026-12-03T11:30:00Z"
//
// An [Index] answers, for every image of a render, whether the lock holds
// its digest for its repository and, when the image names a tag, whether
// the lock pins that tag to the same digest; it then names the entries no
// image used.
package imagelock
