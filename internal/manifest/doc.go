// Package manifest holds the facts the gate reads off rendered objects:
// their identity (kind, namespace, name), an index to find them by, which
// ones are local configuration, and the kustomize origin, transformer and
// image-source annotations that name the file a value came from.
//
// It sits below the rules: the renderer writes these annotations, the rules
// and the cluster reader read them, and none of them needs the other.
package manifest
