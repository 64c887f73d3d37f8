package gate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// A registry that did not answer is no verdict whatever the rules say:
// image-resolve set to off or warning (by flag, --config or an in-tree Gate
// — all end in spec.rules) must not turn pin or verify into a pass.
func TestNoVerdictCannotBeLowered(t *testing.T) {
	for _, sev := range []string{"", "warning", "off", "info"} {
		for _, pin := range []bool{true, false} {
			nodes, err := render.Parse([]byte(stream), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			if sev != "" {
				cfg.Rules = map[string]string{"image-resolve": sev, "image-digest": "off"}
			}
			if !pin {
				cfg.Images.Digest = config.DigestVerify
				nodes, _ = render.Parse([]byte(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: "ghcr.io/shop/web@`+d+`"}]}
`), "s.yaml")
			}
			res := mapResolver{"ghcr.io/shop/web:1.4": {Err: errors.New("unavailable")}, "envoy:v1": {Err: errors.New("unavailable")},
				"ghcr.io/shop/web@" + d: {Err: errors.New("unavailable")}}
			rep, err := gate.Run(context.Background(), nodes, gate.Options{Config: cfg, Pin: pin}, gate.Deps{Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.NoVerdict() || rep.Verdict(false) != finding.VerdictNoVerdict {
				t.Errorf("image-resolve=%q pin=%v: verdict %s, want no-verdict; findings %+v", sev, pin, rep.Verdict(false), rep.Findings)
			}
		}
	}
}
