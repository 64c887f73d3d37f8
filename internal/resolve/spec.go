package resolve

import gateconfig "github.com/kubectl-gate/kubectl-gate/internal/config"

// FromSpec returns the options a Gate's spec.images asks for: mirrors,
// plain-HTTP hosts, a platform, and no tag cache under digest: verify (a
// verify run asks the registry what each tag means now). The plugin and the
// KRM function both start here; the plugin adds what only its flags know
// (jobs, timeout, cache, credentials).
func FromSpec(s *gateconfig.Spec) Options {
	return Options{
		Mirrors:    s.Images.Mirrors,
		Insecure:   s.Images.InsecureRegistries,
		Platform:   s.Images.Platform,
		NoTagCache: s.Images.Digest == gateconfig.DigestVerify,
	}
}
