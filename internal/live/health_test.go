package live_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/live"
)

// obj parses one YAML object for a table test.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := sigsyaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestHealth(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string
		want     []string // problem paths
		settling bool
	}{
		{"deployment available", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
status:
  observedGeneration: 2
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}`, nil, false},
		{"deployment stuck past its progress deadline", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
status:
  observedGeneration: 2
  conditions:
  - {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: ReplicaSet "web-1" has timed out progressing.}`,
			[]string{"status.conditions[Progressing]"}, false},
		{"deployment below minimum availability", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}
status:
  observedGeneration: 1
  conditions:
  - {type: Available, status: "False", reason: MinimumReplicasUnavailable}`,
			[]string{"status.conditions[Available]"}, false},
		{"generation not observed yet", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, generation: 5}
status: {observedGeneration: 4}`,
			[]string{"status.observedGeneration"}, true},
		{"deployment never reconciled", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 1}`,
			[]string{"status"}, true},
		{"configmap has no status and needs none", `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}`, nil, false},
		{"service with an empty status", `
apiVersion: v1
kind: Service
metadata: {name: web}
status: {loadBalancer: {}}`, nil, false},
		{"any kind: Ready False", `
apiVersion: example.com/v1
kind: Database
metadata: {name: db, generation: 1}
status:
  conditions:
  - {type: Ready, status: "False", reason: ProvisioningFailed}`,
			[]string{"status.conditions[Ready]"}, false},
		{"Ready Unknown is not False", `
apiVersion: example.com/v1
kind: Database
metadata: {name: db, generation: 1}
status:
  conditions:
  - {type: Ready, status: Unknown}`, nil, false},
		{"certificate being issued", `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: tls, generation: 1}
status:
  conditions:
  - {type: Issuing, status: "True"}
  - {type: Ready, status: "False", reason: DoesNotExist}`,
			[]string{"status.conditions[Ready]"}, true},
		{"rollout degraded and aborted", `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, generation: 3}
spec: {}
status:
  observedGeneration: "3"
  phase: Degraded
  message: RolloutAborted
  abort: true`,
			[]string{"status.phase", "status.abort"}, false},
		{"rollout with a legacy hash observedGeneration", `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, generation: 3}
status:
  observedGeneration: 7d5979db
  phase: Healthy`, nil, false},
		{"paused rollout is not unhealthy", `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, generation: 2}
spec: {paused: true}
status:
  observedGeneration: "2"
  phase: Paused
  conditions:
  - {type: Paused, status: "True"}
  - {type: Available, status: "True"}`, nil, false},
		{"conditions that are not a list are ignored", `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, generation: 1}
status: {conditions: {}, phase: Healthy}`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := live.Health(obj(t, c.yaml))
			var paths []string
			for _, p := range got {
				paths = append(paths, p.Path)
				if p.Settling != c.settling {
					t.Errorf("%s: Settling = %v, want %v", p.Path, p.Settling, c.settling)
				}
				if p.Message == "" {
					t.Errorf("%s: empty message", p.Path)
				}
			}
			if strings.Join(paths, " ") != strings.Join(c.want, " ") {
				t.Errorf("problems = %v, want %v (%+v)", paths, c.want, got)
			}
		})
	}
}
