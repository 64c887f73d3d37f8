package policy

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestExamplePolicies renders each example overlay (examples/policies) and
// evaluates its policy: the red overlay is denied with the policy's
// message, the green one passes every example policy at once.
func TestExamplePolicies(t *testing.T) {
	root := filepath.Join(testutil.Root(t), "examples", "policies")
	cases := map[string]string{
		"require-pinned":            "images not pinned by digest: registry.example.com/shop/web:1.8.2",
		"no-latest":                 "images must name a version, not latest: web:latest",
		"resource-limits":           "containers without cpu and memory limits: api",
		"rollouts-no-autopromotion": "Rollout api must set strategy.blueGreen.autoPromotionEnabled: false",
	}
	all, err := LoadPaths([]string{filepath.Join(root, "vap")})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range cases {
		set, err := LoadPaths([]string{filepath.Join(root, "vap", name+".yaml")})
		if err != nil {
			t.Fatal(err)
		}
		for _, color := range []string{"red", "green"} {
			res, err := render.Kustomize(filepath.Join(root, "overlays", name+"-"+color), render.Options{})
			if err != nil {
				t.Fatal(err)
			}
			use := set
			if color == "green" {
				use = all
			}
			rep, err := Evaluate(context.Background(), use, res.Resources, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var denied []string
			for _, r := range rep.Results {
				switch r.Action {
				case Deny:
					denied = append(denied, r.Message)
				case Unbound, NoVerdict, Ignored:
					t.Errorf("%s-%s: %s %s", name, color, r.Action, r.Message)
				}
			}
			switch {
			case color == "green" && len(denied) > 0:
				t.Errorf("%s-green denied: %q", name, denied)
			case color == "red" && (len(denied) != 1 || !strings.Contains(denied[0], want)):
				t.Errorf("%s-red denied %q, want one containing %q", name, denied, want)
			}
		}
	}
}

// TestEvaluateCancelled: a run whose context ends before every object was
// evaluated is an error (no verdict), never a report on the objects done.
func TestEvaluateCancelled(t *testing.T) {
	root := filepath.Join(testutil.Root(t), "examples", "policies")
	set, err := LoadPaths([]string{filepath.Join(root, "vap")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Kustomize(filepath.Join(root, "overlays", "no-latest-red"), render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var objs []*yaml.RNode
	for range 100 { // enough objects for every worker
		objs = append(objs, res.Resources...)
	}
	if _, err := Evaluate(context.Background(), set, objs, Options{}); err != nil {
		t.Fatalf("a live context: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Evaluate(ctx, set, objs, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v, want context canceled", err)
	}
}
