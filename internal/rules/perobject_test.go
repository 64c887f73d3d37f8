package rules

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// PerObject gives the findings a loop over the objects gives, in the same
// order, whether it spreads them over the cores or not, and a panic in
// the check reaches the caller's goroutine (Run reports it as the rule's).
func TestPerObject(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	for _, n := range []int{0, 1, parallelFrom - 1, parallelFrom, 1000} {
		objs := make([]*yaml.RNode, n)
		for i := range objs {
			objs[i] = yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i))
		}
		// Every third object has no finding, every fifth two.
		check := func(o *yaml.RNode) []finding.Finding {
			i, _ := strconv.Atoi(o.GetName()[1:])
			var out []finding.Finding
			for j := range []int{0, 1}[:min(2, 1+btoi(i%5 == 0))] {
				if i%3 != 0 {
					out = append(out, finding.Finding{Message: fmt.Sprintf("%d.%d", i, j)})
				}
			}
			return out
		}
		var want []finding.Finding
		for _, o := range objs {
			want = append(want, check(o)...)
		}
		got := PerObject(objs, check)
		if len(got) != len(want) {
			t.Fatalf("%d objects: %d findings, want %d", n, len(got), len(want))
		}
		for i := range want {
			if got[i].Message != want[i].Message {
				t.Fatalf("%d objects: finding %d is %q, want %q", n, i, got[i].Message, want[i].Message)
			}
		}
		if n < parallelFrom {
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != "object c7" {
					t.Errorf("%d objects: recovered %v, want the first panic in object order", n, p)
				}
			}()
			PerObject(objs, func(o *yaml.RNode) []finding.Finding {
				if i, _ := strconv.Atoi(o.GetName()[1:]); i == 7 || i == n-1 {
					panic("object " + o.GetName())
				}
				return nil
			})
		}()
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
