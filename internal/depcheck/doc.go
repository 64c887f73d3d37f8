// Package depcheck holds no code: its tests keep the import graph in the
// shape CONTRIBUTING.md describes (in the spirit of go-containerregistry's
// cmd/crane/depcheck_test.go), so a shortcut import fails a test instead of
// slowly tangling the layers.
package depcheck
