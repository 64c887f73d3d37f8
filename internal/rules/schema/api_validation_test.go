package schema

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const limited = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80, name: http}]
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "1", memory: 256Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: http}
`

const service = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: ClusterIP
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`

func TestAPIValidation(t *testing.T) {
	with := func(old, new string) string { return strings.Replace(limited, old, new, 1) }
	ruletest.Run(t, APIValidation, onAll([]ruletest.Case{
		{Name: "valid Deployment and Service", Input: limited + "---\n" + service},
		{Name: "selector does not match the template", Input: with("labels: {app: web}", "labels: {app: api}"),
			Want: []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"}},
		{Name: "no containers", Input: deployment[:strings.Index(deployment, "      containers:")] + "      containers: []\n",
			Want: []string{"spec.template.spec.containers: Required value"}},
		{Name: "cpu request above its limit", Input: with("cpu: 100m", "cpu: \"2\""),
			Want: []string{"spec.template.spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"}},
		{Name: "memory 1Gb", Input: with("memory: 256Mi", "memory: 1Gb"),
			Want: []string{": quantities must match the regular expression"}},
		{Name: "imagePullPolicy Sometimes", Input: with("        ports:", "        imagePullPolicy: Sometimes\n        ports:"),
			Want: []string{"spec.template.spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\""}},
		{Name: "probe without a handler", Input: with("httpGet: {path: /healthz, port: http}", "periodSeconds: 5"),
			Want: []string{"spec.template.spec.containers[0].readinessProbe: Required value: must specify a handler type"}},
		{Name: "Service type outside the enum", Input: strings.Replace(service, "type: ClusterIP", "type: Loadbalancer", 1),
			Want: []string{"spec.type: Unsupported value: \"Loadbalancer\""}},
		{Name: "a schema error comes first, as in the API server", Input: with("replicas: 3", "replicas: three") + "---\n" + strings.Replace(service, "type: ClusterIP", "type: Loadbalancer", 1),
			Want: []string{"spec.type: Unsupported value"}},
		{Name: "custom resources are the schema's", Input: "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: a}\nspec: {secretName: c, issuerRef: {name: i}}\n"},
	}))
}

func TestAPIValidationMutants(t *testing.T) {
	ruletest.Mutants(t, APIValidation, ruletest.Case{Input: limited})
}
