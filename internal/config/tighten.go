package config

import "slices"

// Tighten returns the config a run uses when the caller's trusted config
// (--config, or the defaults) meets a Gate/Pin object found inside the
// rendered tree, which a pull request controls. The in-tree object may
// only make the gate stricter: raise a rule's severity, raise digest: to
// verify, narrow allowedRegistries, raise minResources, set an
// expectResources the trusted config leaves open, deny remote resources, add podSpecPaths and
// policies (and the render's), name an image lock the trusted config leaves out, require the Pin stamp, fail on warnings. Anything it would loosen keeps the trusted value. Registry
// settings it brings (mirrors, insecure registries, platform) are ignored:
// they come from the trusted config only (SECURITY.md). With
// trusted.AllowInTreeLoosening the in-tree object decides alone, as
// before. defaults maps rule ids to their default severities.
func Tighten(trusted, inTree Spec, defaults map[string]string) Spec {
	if trusted.AllowInTreeLoosening {
		inTree.AllowInTreeLoosening = true
		// Waivers are never the tree's to grant, even when it may loosen:
		// exceptions and whether annotations count stay the trusted
		// config's; rules either makes unwaivable stay so.
		inTree.Exceptions = trusted.Exceptions
		inTree.ExceptionsFromAnnotations = trusted.ExceptionsFromAnnotations
		inTree.Unwaivable = union(trusted.Unwaivable, inTree.Unwaivable)
		return inTree
	}
	out := trusted
	out.Images.Digest = stricter(digestRank, trusted.Images.Digest, inTree.Images.Digest)
	out.Images.AllowedRegistries = narrower(trusted.Images.AllowedRegistries, inTree.Images.AllowedRegistries)
	out.Images.PodSpecPaths = append(slices.Clone(trusted.Images.PodSpecPaths), inTree.Images.PodSpecPaths...)
	out.Images.Fields = append(slices.Clone(trusted.Images.Fields), inTree.Images.Fields...)
	// Registry settings (mirrors, insecure registries, platform) decide who
	// answers what a tag means: they come from the trusted config only (an
	// in-tree mirror would let a pull request choose the digests pinned
	// and verified).
	if a, b := trusted.Render.MinResources, inTree.Render.MinResources; b != nil && (a == nil || *b > *a) {
		out.Render.MinResources = b
	}
	if trusted.Render.ExpectResources == nil {
		out.Render.ExpectResources = inTree.Render.ExpectResources
	}
	if inTree.Render.RemoteDenied() {
		out.Render.Remote = RemoteDeny
	}
	out.Policies = append(slices.Clone(trusted.Policies), inTree.Policies...)
	out.PoliciesFromRender = trusted.PoliciesFromRender || inTree.PoliciesFromRender
	out.Images.RequirePinnedBy = trusted.Images.RequirePinnedBy || inTree.Images.RequirePinnedBy
	// A lock adds a check; the trusted config's, when it names one, wins.
	if out.Images.Lock == nil {
		out.Images.Lock = inTree.Images.Lock
	}
	if inTree.FailOn == FailOnWarning {
		out.FailOn = FailOnWarning
	}
	// An in-tree Gate may not waive (its exceptions are ignored; the
	// caller warns, see IgnoredExceptions) but may make rules unwaivable.
	out.Unwaivable = union(trusted.Unwaivable, inTree.Unwaivable)
	out.Rules = map[string]string{}
	for id, sev := range trusted.Rules {
		out.Rules[id] = sev
	}
	for id, sev := range inTree.Rules {
		cur, ok := out.Rules[id]
		if !ok {
			cur = defaults[id]
		}
		if s := stricter(severityRank, cur, sev); s != cur {
			out.Rules[id] = s
		}
	}
	return out
}

var (
	digestRank   = map[string]int{DigestOff: 0, DigestRequire: 1, DigestVerify: 2}
	severityRank = map[string]int{"off": 0, "info": 1, "warning": 2, "error": 3}
)

// stricter returns b when it ranks above a, else a.
func stricter(rank map[string]int, a, b string) string {
	if rb, ok := rank[b]; ok && rb > rank[a] {
		return b
	}
	return a
}

// narrower intersects two allow-lists, where empty means "any".
func narrower(a, b []string) []string {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	var out []string
	for _, x := range b {
		if slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	if out == nil {
		return a // disjoint: empty would mean "any", so the trusted list stands
	}
	return out
}

// union returns a followed by the entries of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
