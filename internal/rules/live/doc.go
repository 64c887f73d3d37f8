// Package live registers the live rules of `kubectl gate status`. Their
// checks run against a cluster, in internal/live; they are registered here
// with a nil Check, which the engine skips, so the configuration, output and
// docs know their ids.
package live
