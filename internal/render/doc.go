// Package render turns the plugin's inputs into resources: a kustomization
// rendered in process with the kustomize API (krusty), or files, directories
// and stdin read as a rendered stream.
//
// A kustomization that lists this project's own Gate (validators:) or Pin
// (transformers:) is handled in process: the entries are taken out of the
// build, recorded (with gate-placement findings when they sit in the wrong
// field or in a base), and applied by the caller. So
// `kubectl gate check -k overlays/prod` works on the very overlay that
// carries the gate, with no exec and no flags (README "Use: the KRM function inside kustomize").
//
// The in-process render switches on kustomize's origin and transformer
// annotations, so a finding can name the file that produced a value.
package render
