// Package plugin is the kubectl shell of the gate (the kubectl-gate binary,
// run by kubectl as `kubectl gate …`).
//
//	kubectl gate check    (-k DIR | -f FILE|DIR|- ...) [flags]
//	kubectl gate pin      (-k DIR | -f ...) [--write-kustomization DIR]
//	kubectl gate selftest (-k DIR | -f ...)
//	kubectl gate status   APP [-n argocd]
//	kubectl gate version
//
// Flags are parsed with spf13/pflag; cluster flags come from cli-runtime.
// Run returns the process exit code of the README ("Exit codes"): 0 pass, 1 violations,
// 2 usage, 3 no verdict.
package plugin
