package fn_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/fn"
)

var taggedImage = deploymentItem("legacy", "ghcr.io/shop/legacy:3.1")

// TestFunctionAppliesExceptions: inside kustomize the function's config is
// the trusted config, and its exceptions waive as the plugin's do: the
// waived finding is an info result naming the waiver, an expired entry
// fails the build naming its owner.
func TestFunctionAppliesExceptions(t *testing.T) {
	entry := "    exceptions:\n    - {rules: [image-digest], match: {kind: Deployment, name: legacy}, reason: vendor tags only, owner: team-shop, expires: %s}\n"
	cases := []struct {
		name, expires string
		fails         bool
		says          []string
	}{
		{"valid", "2999-12-31", false, []string{"ERROR [image-digest] Deployment/legacy (ns shop)", "(waived by functionConfig Gate gate spec.exceptions[0]; owner team-shop; expires 2999-12-31; reason: vendor tags only)"}},
		{"expired", "2000-01-01", true, []string{"ERROR [exception-expired] spec.exceptions[0]: spec.exceptions[0] (owner team-shop) of image-digest expired on 2000-01-01", "ERROR [image-digest] Deployment/legacy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := fn.Run(context.Background(), strings.NewReader(gateList(strings.Replace(entry, "%s", c.expires, 1), taggedImage)), &out, &errOut, "test")
			if got := errors.Is(err, fn.ErrFindings); got != c.fails || (err != nil && !got) {
				t.Fatalf("err = %v, want fails=%v\nstderr:\n%s", err, c.fails, errOut.String())
			}
			for _, s := range c.says {
				if !strings.Contains(errOut.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut.String())
				}
			}
			if !c.fails && !strings.Contains(out.String(), "suppressed: exception") {
				t.Errorf("the waived result is not tagged suppressed:\n%s", out.String())
			}
		})
	}
}
