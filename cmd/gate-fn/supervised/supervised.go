// Package supervised starts gate-fn's supervision (package
// supervise) from a package initializer, before the initializers of the
// packages that do the work: the parent, which only starts the child and
// maps how it ended to an exit code, then skips their start-up cost (about
// 0.1 s of CPU; Kubernetes' API schemes, Helm, the registry clients). The
// command imports it first, for its side effect alone.
//
// It imports nothing but package supervise, which imports a few standard
// library packages: the Go specification initializes a package as soon as
// its imports are, in the order of import paths, so the parent runs after
// those and before most others. Had the order put others first, the
// parent would be slower, never wrong. The child's own set-up
// (supervise/child) is called first in main.
package supervised

import "github.com/kubectl-gate/kubectl-gate/internal/supervise"

func init() {
	supervise.Run("gate-fn", supervise.NoVerdict) // a crash Go cannot recover from is still no verdict
}
