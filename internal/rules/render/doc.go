// Package render holds the rules about the render as a whole: it is empty,
// it holds an unexpected number of objects, or the gate itself sits in the
// wrong place of the kustomization.
package render
