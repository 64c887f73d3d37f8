// Package pipeline is the gate's core: it plans units from the inputs,
// renders them, expands what the renders hold (Argo CD Applications,
// ApplicationSets, Flux Kustomizations and HelmReleases) into more units,
// checks each unit with the rules, blames each finding to the file that set
// it, and returns one Result. It prints nothing, parses no flags and sets
// no exit codes: the shells do (plugin, and the callers to come: diff,
// render, the Argo CD plugin route).
//
//	res, err := pipeline.Run(ctx, pipeline.Inputs{Kustomizations: []string{"overlays/prod"}}, pipeline.Options{Version: v})
//	if err != nil { … }              // a usage error: nothing was checked
//	for _, u := range res.Units {
//		u.Source                     // what was rendered: *Kustomization, *Files, *Chart, *AppSource, …
//		u.Resources                  // the render, as kyaml RNodes
//		u.Err                        // no verdict on this unit, or
//		u.Report                     // its findings
//		u.Config                     // the configuration that decided
//		u.FilesRead()                // the files its render read
//	}
//	res.Configs                      // which configurations decided, for the report
//
// Plan stops after rendering and expanding, for callers that check
// otherwise; Result.Check checks a plan; Result.Selftest mutates each
// unit's render and checks it again (selftest).
//
// A unit is one render. Its Source is one type per kind of source; the
// one place to add a new kind is unit.go (the type and its input label,
// how it finishes its report, its selftest mutants) plus where it is
// planned: plan.go for an input, generated.go for what a render's objects
// generate (apps.go for Argo CD Application sources).
package pipeline
