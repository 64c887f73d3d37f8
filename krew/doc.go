// Package krew renders the krew plugin manifest (krew/gate.yaml) from its
// template and the release archives' checksums; krew/render is its command
// (`make krew-manifest`). Its tests validate the manifest with the real
// validate-krew-manifest, install it with the real `kubectl krew`, and check
// the Dockerfile and the KRM function binary the image runs.
package krew
