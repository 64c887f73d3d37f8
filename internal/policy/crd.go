package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

// checkCRD refuses a CustomResourceDefinition given with the policies that
// the API server would refuse to create: its x-kubernetes-validations rules
// must compile and stay within the CEL cost budget, its schema must be
// structural, and so on (apivalidation.ValidateCRD). It describes a
// paramKind the policies are judged with.
func checkCRD(u *unstructured.Unstructured) error {
	verdict, _ := apivalidation.ValidateCRD(u.DeepCopy().Object)
	if verdict == nil {
		return nil
	}
	msg := verdict.Decode
	if msg == "" {
		parts := make([]string, len(verdict.Fields))
		for i, f := range verdict.Fields {
			parts[i] = f.Error()
		}
		msg = strings.Join(parts, "; ")
	}
	return fmt.Errorf("CustomResourceDefinition %q: the API server refuses it: %s", u.GetName(), msg)
}
