package rolloutvalidation

import (
	"fmt"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestPreparedPullPolicies: the Rollout Validate hands to the upstream
// validation has a pull policy on every container of its pod template, its
// own or one resolved from a workloadRef, so ValidateRolloutSpec's
// defaulting parses no image; and that template, defaulted as upstream
// defaults it, is the template defaulted without them.
func TestPreparedPullPolicies(t *testing.T) {
	images := testutil.ImageShapes
	podSpec := func(image, policy string) string {
		p := ""
		if policy != "" {
			p = ", imagePullPolicy: " + policy
		}
		return fmt.Sprintf(`{initContainers: [{name: i, image: %q%s}], containers: [{name: c, image: %q}, {name: d, image: busybox}], ephemeralContainers: [{name: e, image: %q}]}`,
			image, p, image, image)
	}
	for _, image := range images {
		for _, policy := range []string{"", "Never"} {
			own := yaml.MustParse(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r, namespace: ns}
spec:
  selector: {matchLabels: {a: b}}
  template: {metadata: {labels: {a: b}}, spec: ` + podSpec(image, policy) + `}
  strategy: {canary: {steps: [{pause: {}}]}}
`)
			viaRef := yaml.MustParse(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r, namespace: ns}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  strategy: {canary: {steps: [{pause: {}}]}}
`)
			deployment := yaml.MustParse(`apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  selector: {matchLabels: {a: b}}
  template: {metadata: {labels: {a: b}}, spec: ` + podSpec(image, policy) + `}
`)
			lookup := func(group, kind, namespace, name string) *yaml.RNode {
				if group == "apps" && kind == "Deployment" && namespace == "ns" && name == "d" {
					return deployment
				}
				return nil
			}
			for name, obj := range map[string]*yaml.RNode{"template": own, "workloadRef": viaRef} {
				ro, err := prepare(obj, lookup)
				if err != nil {
					t.Fatalf("%s %q: %v", name, image, err)
				}
				spec := ro.Spec.Template.Spec
				var all []corev1.Container
				all = append(append(all, spec.InitContainers...), spec.Containers...)
				for _, e := range spec.EphemeralContainers {
					all = append(all, corev1.Container(e.EphemeralContainerCommon))
				}
				if len(all) != 4 {
					t.Fatalf("%s %q: %d containers, want 4", name, image, len(all))
				}
				for _, c := range all {
					if c.ImagePullPolicy == "" {
						t.Errorf("%s %q: container %s has no pull policy", name, image, c.Name)
					}
				}
				// As ValidateRolloutSpec defaults the template: a PodTemplate.
				prepared := corev1.PodTemplate{Template: *ro.Spec.Template.DeepCopy()}
				plain := &v1alpha1.Rollout{}
				if err := decodeJSON(obj, plain); err != nil {
					t.Fatal(err)
				}
				if err := resolveWorkloadRef(lookup, plain); err != nil {
					t.Fatal(err)
				}
				upstream := corev1.PodTemplate{Template: *plain.Spec.Template.DeepCopy()}
				corev1defaults.SetObjectDefaults_PodTemplate(&prepared)
				corev1defaults.SetObjectDefaults_PodTemplate(&upstream)
				if !apiequality.Semantic.DeepEqual(prepared, upstream) {
					t.Errorf("%s %q (policy %q): defaulted templates differ:\n%#v\n%#v", name, image, policy, prepared.Template.Spec, upstream.Template.Spec)
				}
			}
		}
	}
}
