// Package testutil holds helpers for tests only: the shared corpus, the
// built binaries and golden files.
package testutil
