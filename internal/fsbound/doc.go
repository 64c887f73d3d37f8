// Package fsbound is the one filesystem boundary every renderer reads a
// checkout through: kustomize (its filesys.FileSystem is wrapped), Helm
// (chart directories, file:// dependencies, values files), ApplicationSet
// git generators, Flux HelmRelease charts and the overlay's own Gate
// (spec.policies, spec.schema.crds).
//
// A Root is a directory, normally the repository the input lies in (For).
// Through it:
//
//   - a symlink whose target lies outside the root is an *EscapeError
//     naming the link, and nothing it points at is read;
//   - only regular files are read: a FIFO, a device or a socket is a
//     *NotRegularError, never opened for reading (no hang on a FIFO, no
//     endless /dev/zero);
//   - a file larger than the cap is a *TooLargeError, read no further.
//
// Errors name paths, never content: what a file outside the root holds
// cannot reach a message because it is never read.
package fsbound
