package fn

import (
	"fmt"
	"os"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
)

// EnvTrustedConfig names a Gate file the platform team mounts where the
// function runs (Argo CD's repo-server): the trusted floor. With it the
// functionConfig, which the repository writes, may only tighten it
// (config.Tighten), as an in-tree Gate does for the plugin; without it the
// functionConfig is the whole config (README "Inside Argo CD").
const EnvTrustedConfig = "KUBECTL_GATE_CONFIG"

// floor reads the trusted config EnvTrustedConfig names; nil when unset.
func floor() (*config.Object, error) {
	path := os.Getenv(EnvTrustedConfig)
	if path == "" {
		return nil, nil
	}
	obj, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvTrustedConfig, path, err)
	}
	return obj, nil
}

// onFloor returns the functionConfig tightened onto the trusted floor:
// the floor decides unless it says allowInTreeLoosening; the kind (Gate or
// Pin) stays the functionConfig's.
func onFloor(trusted, fnConfig *config.Object) *config.Object {
	if trusted == nil {
		return fnConfig
	}
	defaults := map[string]string{}
	for _, r := range all.Rules() {
		defaults[r.ID] = string(r.Default)
	}
	out := *fnConfig
	out.Spec = config.Tighten(trusted.Spec, fnConfig.Spec, defaults)
	return &out
}
