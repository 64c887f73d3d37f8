package apivalidation

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.2.3
        ports: [{containerPort: 8080}]
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "1", memory: 256Mi}
`

func obj(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("parsing test object: %v", err)
	}
	return integers(m).(map[string]any) // package schema's data model
}

// errorText renders a verdict as the API server's words, one per line.
func errorText(e *Error) string {
	if e == nil {
		return ""
	}
	if e.Decode != "" {
		return e.Decode
	}
	var lines []string
	for _, f := range e.Fields {
		lines = append(lines, f.Error())
	}
	return strings.Join(lines, "\n")
}

func TestRejectsWhatTheAPIServerRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"selector does not match the template", strings.Replace(deployment, "labels: {app: web}", "labels: {app: api}", 1),
			"spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"},
		{"no containers", strings.Replace(deployment, "      containers:\n", "      containers: []\n      initContainers:\n", 1),
			"spec.template.spec.containers: Required value"},
		{"cpu request above its limit", strings.Replace(deployment, "cpu: 100m", "cpu: \"2\"", 1),
			"must be less than or equal to cpu limit of 1"},
		{"memory 1Gb", strings.Replace(deployment, "memory: 256Mi", "memory: 1Gb", 1),
			"quantities must match the regular expression"},
		{"imagePullPolicy Sometimes", strings.Replace(deployment, "        ports:", "        imagePullPolicy: Sometimes\n        ports:", 1),
			"spec.template.spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\""},
		{"duplicate container names", strings.Replace(deployment, "      - name: web\n", "      - {name: web, image: busybox:1.36}\n      - name: web\n", 1),
			"spec.template.spec.containers[1].name: Duplicate value: \"web\""},
		{"port out of range", strings.Replace(deployment, "containerPort: 8080", "containerPort: 80800", 1),
			"spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 80800: must be between 1 and 65535, inclusive"},
		{"Service type outside the enum", `apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec:
  type: Loadbalancer
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`, "spec.type: Unsupported value: \"Loadbalancer\""},
		{"Service name not a DNS label", `apiVersion: v1
kind: Service
metadata: {name: web_1, namespace: prod}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`, "metadata.name: Invalid value: \"web_1\""},
		{"label value with a space", strings.Replace(deployment, "metadata: {name: web, namespace: prod}", "metadata: {name: web, namespace: prod, labels: {team: \"a b\"}}", 1),
			"metadata.labels: Invalid value: \"a b\""},
		{"generateName prefix invalid", `apiVersion: batch/v1
kind: Job
metadata: {generateName: Bad_Prefix-, namespace: prod}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox:1.36}]
`, "metadata.generateName: Invalid value: \"Bad_Prefix-\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := Validate(obj(t, tc.doc))
			if !ok {
				t.Fatal("kind not handled")
			}
			if got := errorText(v); !strings.Contains(got, tc.want) {
				t.Errorf("want an error containing\n  %s\ngot\n  %s", tc.want, got)
			}
		})
	}
}

// TestAcceptsWhatTheAPIServerAccepts holds the cases a stricter check got
// wrong: an Argo CD hook Job with only generateName, as Argo CD's sync-waves
// documentation shows one, and an empty byte string in a Secret's data
// (accepted by kube-apiserver v1.37.2).
func TestAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"a realistic Deployment", deployment},
		// A node agent as CNI and CSI plugins ship it: privileged, on the
		// host network. Clusters run with --allow-privileged=true.
		{"privileged DaemonSet on the host network", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      hostNetwork: true
      hostPID: true
      containers:
      - name: agent
        image: registry.example.com/agent:1.0.0
        securityContext: {privileged: true}
`},
		{"Argo CD PreSync hook Job with generateName only", `apiVersion: batch/v1
kind: Job
metadata:
  generateName: schema-migrate-
  namespace: prod
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: HookSucceeded
spec:
  template:
    spec:
      containers:
      - name: schema-migrate
        image: registry.example.com/migrate:1.0.0
        command: [/migrate]
      restartPolicy: Never
  backoffLimit: 0
`},
		{"Secret with an empty data value", `apiVersion: v1
kind: Secret
metadata: {name: app-credentials, namespace: prod}
type: Opaque
data:
  password: ""
  username: YWRtaW4=
`},
		{"headless Service (clusterIP None, no clusterIPs)", `apiVersion: v1
kind: Service
metadata: {name: my-svc-canary, namespace: argo-examples}
spec:
  clusterIP: None
  ports: [{port: 80, targetPort: http, protocol: TCP, name: http}]
  selector: {app: my-app}
`},
		{"Service of type LoadBalancer", `apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := Validate(obj(t, tc.doc))
			if !ok {
				t.Fatal("kind not handled")
			}
			if v != nil {
				t.Errorf("rejected:\n%s", errorText(v))
			}
		})
	}
}

func TestHandles(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		want             bool
	}{
		{"apps/v1", "Deployment", true},
		{"v1", "Secret", true},
		{"networking.k8s.io/v1", "Ingress", true},
		{"argoproj.io/v1alpha1", "Rollout", false},
		{"apps/v1", "Rollout", false},
		{"not a/group/version", "Deployment", false},
	} {
		if got := Handles(tc.apiVersion, tc.kind); got != tc.want {
			t.Errorf("Handles(%q, %q) = %v, want %v", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}
