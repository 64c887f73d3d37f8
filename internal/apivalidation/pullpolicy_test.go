package apivalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestPullPoliciesAreTheDefaultings: for each workload kind and each shape
// of image reference, the object defaulted after defaultPullPolicies is the
// object the API server's defaulting alone gives (SetDefaults_Container).
func TestPullPoliciesAreTheDefaultings(t *testing.T) {
	images := testutil.ImageShapes
	podSpec := func(image, policy string) string {
		p := ""
		if policy != "" {
			p = ", imagePullPolicy: " + policy
		}
		return fmt.Sprintf(`{initContainers: [{name: i, image: %q%s}], containers: [{name: c, image: %q%s}, {name: d, image: busybox}], ephemeralContainers: [{name: e, image: %q}]}`,
			image, p, image, p, image)
	}
	template := func(image, policy string) string {
		return `{metadata: {labels: {a: b}}, spec: ` + podSpec(image, policy) + `}`
	}
	wrap := func(i, p string) string { return `spec: {template: ` + template(i, p) + `}` }
	kinds := []struct {
		apiVersion, kind string
		body             func(image, policy string) string
	}{
		{"v1", "Pod", func(i, p string) string { return `spec: ` + podSpec(i, p) }},
		{"v1", "PodTemplate", func(i, p string) string { return `template: ` + template(i, p) }},
		{"v1", "ReplicationController", wrap},
		{"apps/v1", "Deployment", wrap},
		{"apps/v1", "ReplicaSet", wrap},
		{"apps/v1", "DaemonSet", wrap},
		{"apps/v1", "StatefulSet", wrap},
		{"batch/v1", "Job", wrap},
		{"batch/v1", "CronJob", func(i, p string) string {
			return `spec: {schedule: "* * * * *", jobTemplate: {spec: {template: ` + template(i, p) + `}}}`
		}},
	}
	for _, k := range kinds {
		gv, _ := schema.ParseGroupVersion(k.apiVersion)
		for _, image := range images {
			for _, policy := range []string{"", "Never"} {
				doc := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: x}\n%s\n", k.apiVersion, k.kind, k.body(image, policy))
				var m map[string]any
				if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
					t.Fatalf("%s: %v", doc, err)
				}
				m = integers(m).(map[string]any)
				fast, err := decode(m, gv.WithKind(k.kind), legacyscheme.Scheme, legacyscheme.Codecs)
				if err != nil {
					t.Fatalf("%s: %v", doc, err)
				}
				plain, _ := decode(m, gv.WithKind(k.kind), legacyscheme.Scheme, legacyscheme.Codecs)
				defaultPullPolicies(fast)
				// Every container has its policy before the defaulting runs:
				// the defaulting's parse is skipped.
				if n := strings.Count(fmt.Sprintf("%#v", fast), `ImagePullPolicy:""`); n != 0 {
					t.Errorf("%s/%s %q: %d containers without a policy after defaultPullPolicies", k.apiVersion, k.kind, image, n)
				}
				legacyscheme.Scheme.Default(fast)
				legacyscheme.Scheme.Default(plain)
				if !apiequality.Semantic.DeepEqual(fast, plain) {
					t.Errorf("%s/%s %q (policy %q): defaulted objects differ:\n%#v\n%#v", k.apiVersion, k.kind, image, policy, fast, plain)
				}
			}
		}
	}
	// The cache gives the same answer twice, and "latest" is Always.
	for range 2 {
		if got := pullPolicyOf("nginx"); got != corev1.PullAlways {
			t.Errorf("nginx: %s, want Always", got)
		}
		if got := pullPolicyOf("nginx:1.27"); got != corev1.PullIfNotPresent {
			t.Errorf("nginx:1.27: %s, want IfNotPresent", got)
		}
	}
}
