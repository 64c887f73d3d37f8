// Package images holds the rules about the images a render runs: pinned by
// digest, resolvable, not stale, from an allowed registry, stamped by the
// Pin transformer. Every image of the render is found and parsed once per
// run, however many of these rules ask.
package images
