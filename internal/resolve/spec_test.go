package resolve_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
)

// TestFromSpec: the registry settings of a Gate reach the resolver the
// same way from both shells.
func TestFromSpec(t *testing.T) {
	s := config.Default()
	s.Images.Mirrors = map[string]string{"docker.io": "mirror.example"}
	s.Images.InsecureRegistries = []string{"127.0.0.1:5000"}
	s.Images.Platform = "linux/arm64"
	o := resolve.FromSpec(s)
	if o.Mirrors["docker.io"] != "mirror.example" || len(o.Insecure) != 1 || o.Platform != "linux/arm64" || o.NoTagCache {
		t.Errorf("options = %+v", o)
	}
	s.Images.Digest = config.DigestVerify
	if !resolve.FromSpec(s).NoTagCache {
		t.Error("verify must not answer tags from the cache")
	}
}
