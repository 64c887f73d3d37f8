// Package diff compares two runs of the pipeline — the inputs at a git
// revision, checked out in a temporary worktree, and the working tree — and
// says what a change does: per input and per Argo CD / Flux app, the objects
// added, removed and changed with a field-level diff; the findings new,
// fixed and unchanged; and the renderers used. It never prints a Secret's
// value: for data and stringData only key names and sizes
// ("changed (8 → 12 bytes)").
//
// Formats: text, json, markdown (for a pull-request comment: counts first,
// collapsed sections, at most GitHub's 65,536 characters per part) and html
// (one self-contained file: no external request, a Content-Security-Policy
// that forbids any).
package diff
