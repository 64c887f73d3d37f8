package policy

// The agreement matrix: each case is a policy setup (VAP, binding, params,
// namespaces) in its own namespace, and objects with the verdict the gate
// must give. TestMatrixGate checks the gate against these expectations;
// TestMatrixAPIServer creates the same setup in a real kube-apiserver and
// checks, object by object with --dry-run=server, that the API server's
// verdict and message equal the gate's.
//
// In a setup, NS stands for the case's namespace. Bindings select it with
// a namespaceSelector on kubernetes.io/metadata.name, so cases do not see
// each other's objects.

type matrixObject struct {
	yaml string
	// want: "admit", "deny:<substring>", "warn:<substring>",
	// "audit:<substring>", "ignored:<substring>"; several joined by " & ".
	want string
}

type matrixCase struct {
	name    string
	setup   string
	objects []matrixObject
	// unbound: the gate must report the policy as checking nothing.
	unbound bool
}

const pinnedPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-pinned}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.template.spec.containers.all(c, c.image.contains('@sha256:'))
    message: every container image must be pinned by digest
`

func binding(actions string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding}
spec:
  policyName: NS-pinned
  validationActions: ` + actions + `
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
`
}

func deployment(name, image string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      containers:
      - name: app
        image: ` + image + `
`
}

const digest = "registry.example.com/shop/api:1.4@sha256:0f3c0e2ae4c9f3b8a5b1f6f0a7c3d2e1b4a5c6d7e8f9a0b1c2d3e4f5a6b7c8d9"

// cmPolicy is a policy on ConfigMaps with the given spec body (indented by
// two spaces under spec, after matchConstraints).
func cmPolicy(extra string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
` + extra
}

func cmBinding(actions, extra string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding}
spec:
  policyName: NS-policy
  validationActions: ` + actions + `
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
` + extra
}

func configMap(name, labels, data string) string {
	return `
apiVersion: v1
kind: ConfigMap
metadata: {name: ` + name + `, namespace: NS, labels: {` + labels + `}}
data: {` + data + `}
`
}

const limitCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gatelimits.policy.gate.example.com}
spec:
  group: policy.gate.example.com
  scope: Cluster
  names: {plural: gatelimits, singular: gatelimit, kind: GateLimit, listKind: GateLimitList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              maxKeys: {type: integer}
`

var matrixCases = []matrixCase{
	{
		name:  "deny-pinned",
		setup: pinnedPolicy + "---" + binding("[Deny]"),
		objects: []matrixObject{
			{deployment("tagged", "registry.example.com/shop/api:1.4"), "deny:every container image must be pinned by digest"},
			{deployment("latest", "nginx:latest"), "deny:every container image must be pinned by digest"},
			{deployment("pinned", digest), "admit"},
		},
	},
	{
		name:  "warn-pinned",
		setup: pinnedPolicy + "---" + binding("[Warn]"),
		objects: []matrixObject{
			{deployment("tagged", "registry.example.com/shop/api:1.4"), "warn:every container image must be pinned by digest"},
			{deployment("pinned", digest), "admit"},
		},
	},
	{
		name:  "audit-pinned",
		setup: pinnedPolicy + "---" + binding("[Audit]"),
		objects: []matrixObject{
			{deployment("tagged", "registry.example.com/shop/api:1.4"), "audit:every container image must be pinned by digest"},
			{deployment("pinned", digest), "admit"},
		},
	},
	{
		name:  "warn-and-audit",
		setup: pinnedPolicy + "---" + binding("[Warn, Audit]"),
		objects: []matrixObject{
			{deployment("tagged", "nginx:1.27"), "warn:must be pinned & audit:must be pinned"},
		},
	},
	{
		name:  "deny-and-audit",
		setup: pinnedPolicy + "---" + binding("[Deny, Audit]"),
		objects: []matrixObject{
			{deployment("tagged", "nginx:1.27"), "deny:must be pinned & audit:must be pinned"},
			{deployment("pinned", digest), "admit"},
		},
	},
	{
		name: "message-expression",
		setup: cmPolicy(`  validations:
  - expression: size(object.data) <= 2
    messageExpression: "'ConfigMap ' + object.metadata.name + ' has ' + string(size(object.data)) + ' keys, at most 2 are allowed'"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("big", "", "a: '1', b: '2', c: '3'"), "deny:ConfigMap big has 3 keys, at most 2 are allowed"},
			{configMap("small", "", "a: '1'"), "admit"},
		},
	},
	{
		name: "reason-forbidden",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.data.password)"
    message: ConfigMaps must not hold passwords
    reason: Forbidden
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("secretish", "", "password: hunter2"), "deny:ConfigMaps must not hold passwords"},
			{configMap("clean", "", "user: app"), "admit"},
		},
	},
	{
		name: "default-message",
		setup: cmPolicy(`  validations:
  - expression: "'owner' in object.metadata.labels"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("orphan", "app: x", ""), "deny:failed expression: 'owner' in object.metadata.labels"},
			{configMap("owned", "owner: team-a", ""), "admit"},
		},
	},
	{
		name: "second-validation-fails",
		setup: cmPolicy(`  validations:
  - expression: has(object.data)
    message: data is required
  - expression: object.data.all(k, k.matches('^[a-z]+$'))
    message: keys must be lowercase letters
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("upper", "", "Key: v"), "deny:keys must be lowercase letters"},
			{configMap("lower", "", "key: v"), "admit"},
			{configMap("empty", "", ""), "deny:data is required"},
		},
	},
	{
		name: "variables",
		setup: cmPolicy(`  variables:
  - name: keys
    expression: "has(object.data) ? object.data.map(k, k) : []"
  - name: tooLong
    expression: variables.keys.filter(k, size(k) > 8)
  validations:
  - expression: size(variables.tooLong) == 0
    messageExpression: "'keys longer than 8 characters: ' + variables.tooLong.join(', ')"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("long", "", "averyverylongkey: v, short: v"), "deny:keys longer than 8 characters: averyverylongkey"},
			{configMap("short", "", "short: v"), "admit"},
		},
	},
	{
		name: "match-conditions",
		setup: cmPolicy(`  matchConditions:
  - name: only-team-objects
    expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  validations:
  - expression: object.metadata.labels.team in ['payments', 'search']
    messageExpression: "'unknown team ' + object.metadata.labels.team"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("rogue", "team: rogue", ""), "deny:unknown team rogue"},
			{configMap("payments", "team: payments", ""), "admit"},
			{configMap("untagged", "app: x", ""), "admit"},
		},
	},
	{
		name: "object-selector-binding",
		setup: cmPolicy(`  validations:
  - expression: "has(object.data) && 'checksum' in object.data"
    message: gated ConfigMaps need a checksum
`) + "---" + cmBinding("[Deny]", `    objectSelector: {matchLabels: {gate: "on"}}
`),
		objects: []matrixObject{
			{configMap("gated", "gate: \"on\"", "a: b"), "deny:gated ConfigMaps need a checksum"},
			{configMap("ungated", "gate: \"off\"", "a: b"), "admit"},
		},
	},
	{
		name: "object-selector-policy",
		setup: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    objectSelector:
      matchExpressions: [{key: tier, operator: In, values: [frontend]}]
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "'public' in object.data"
    message: frontend ConfigMaps must say whether they are public
` + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("fe", "tier: frontend", "a: b"), "deny:frontend ConfigMaps must say whether they are public"},
			{configMap("be", "tier: backend", "a: b"), "admit"},
		},
	},
	{
		name: "namespace-selector",
		setup: `
apiVersion: v1
kind: Namespace
metadata: {name: NS-prod, labels: {env: prod}}
---
apiVersion: v1
kind: Namespace
metadata: {name: NS-dev, labels: {env: dev}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    namespaceSelector: {matchLabels: {env: prod}}
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "!('debug' in object.data)"
    messageExpression: "'debug settings are not allowed in namespace ' + namespaceObject.metadata.name"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding}
spec:
  policyName: NS-policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [NS-prod, NS-dev]}]}
`,
		objects: []matrixObject{
			{nsConfigMap("NS-prod", "debug: 'true'"), "deny:debug settings are not allowed in namespace NS-prod"},
			{nsConfigMap("NS-dev", "debug: 'true'"), "admit"},
			{nsConfigMap("NS-prod", "level: info"), "admit"},
		},
	},
	{
		name: "params-configmap",
		setup: `
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: NS}
data: {maxKeys: "2"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    objectSelector: {matchExpressions: [{key: role, operator: NotIn, values: [params]}]}
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "!has(object.data) || size(object.data) <= int(params.data.maxKeys)"
    messageExpression: "'at most ' + params.data.maxKeys + ' keys (from ConfigMap ' + params.metadata.name + ')'"
` + "---" + cmBinding("[Deny]", `  paramRef: {name: limits, namespace: NS, parameterNotFoundAction: Deny}
`),
		objects: []matrixObject{
			{configMap("many", "", "a: '1', b: '2', c: '3'"), "deny:at most 2 keys (from ConfigMap limits)"},
			{configMap("few", "", "a: '1'"), "admit"},
		},
	},
	{
		name: "params-crd",
		setup: limitCRD + `---
apiVersion: policy.gate.example.com/v1
kind: GateLimit
metadata: {name: NS-limit}
spec: {maxKeys: 1}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  paramKind: {apiVersion: policy.gate.example.com/v1, kind: GateLimit}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "!has(object.data) || size(object.data) <= params.spec.maxKeys"
    messageExpression: "'GateLimit ' + params.metadata.name + ' allows ' + string(params.spec.maxKeys) + ' key(s)'"
` + "---" + cmBinding("[Deny]", `  paramRef: {name: NS-limit, parameterNotFoundAction: Deny}
`),
		objects: []matrixObject{
			{configMap("two", "", "a: '1', b: '2'"), "deny:GateLimit NS-limit allows 1 key(s)"},
			{configMap("one", "", "a: '1'"), "admit"},
		},
	},
	{
		name: "params-selector",
		setup: `
apiVersion: v1
kind: ConfigMap
metadata: {name: banned-a, namespace: NS, labels: {role: params}}
data: {key: forbidden}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: banned-b, namespace: NS, labels: {role: params}}
data: {key: legacy}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    objectSelector: {matchExpressions: [{key: role, operator: NotIn, values: [params]}]}
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "!has(object.data) || !(params.data.key in object.data)"
    messageExpression: "'key ' + params.data.key + ' is banned by ' + params.metadata.name"
` + "---" + cmBinding("[Deny]", `  paramRef:
    namespace: NS
    selector: {matchLabels: {role: params}}
    parameterNotFoundAction: Deny
`),
		objects: []matrixObject{
			{configMap("uses-legacy", "", "legacy: x"), "deny:key legacy is banned by banned-b"},
			{configMap("fine", "", "modern: x"), "admit"},
		},
	},
	{
		name: "param-not-found-deny",
		setup: cmPolicy(`  paramKind: {apiVersion: v1, kind: ConfigMap}
  validations:
  - expression: "params.data.enabled == 'true'"
`) + "---" + cmBinding("[Deny]", `  paramRef: {name: absent, namespace: NS, parameterNotFoundAction: Deny}
`),
		objects: []matrixObject{
			{configMap("any", "", "a: b"), "deny:no params found for policy binding with `Deny` parameterNotFoundAction"},
		},
	},
	{
		name: "param-not-found-allow",
		setup: cmPolicy(`  paramKind: {apiVersion: v1, kind: ConfigMap}
  validations:
  - expression: "params.data.enabled == 'true'"
`) + "---" + cmBinding("[Deny]", `  paramRef: {name: absent, namespace: NS, parameterNotFoundAction: Allow}
`),
		objects: []matrixObject{
			{configMap("any", "", "a: b"), "admit"},
		},
	},
	{
		name: "failure-policy-fail",
		setup: cmPolicy(`  failurePolicy: Fail
  validations:
  - expression: "object.data.mode == 'strict'"
    message: mode must be strict
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("no-mode", "", "other: x"), "deny:resulted in error: no such key: mode"},
			{configMap("lax", "", "mode: lax"), "deny:mode must be strict"},
			{configMap("strict", "", "mode: strict"), "admit"},
		},
	},
	{
		name: "failure-policy-ignore",
		setup: cmPolicy(`  failurePolicy: Ignore
  validations:
  - expression: "object.data.mode == 'strict'"
    message: mode must be strict
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("no-mode", "", "other: x"), "ignored:no such key: mode"},
			{configMap("lax", "", "mode: lax"), "deny:mode must be strict"},
			{configMap("strict", "", "mode: strict"), "admit"},
		},
	},
	{
		name: "match-condition-error-fail",
		setup: cmPolicy(`  matchConditions:
  - name: by-mode
    expression: "object.data.mode == 'checked'"
  validations:
  - expression: "'owner' in object.data"
    message: checked ConfigMaps need an owner
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("unchecked", "", "x: y"), "deny:no such key: mode"},
			{configMap("checked", "", "mode: checked"), "deny:checked ConfigMaps need an owner"},
			{configMap("owned", "", "mode: checked, owner: me"), "admit"},
		},
	},
	{
		name: "request-is-create",
		setup: cmPolicy(`  validations:
  - expression: "request.operation == 'CREATE' && oldObject == null && request.kind.kind == 'ConfigMap' && request.namespace == object.metadata.namespace"
    message: not a create
  - expression: "!('reject' in object.data)"
    messageExpression: "'rejected ' + request.resource.resource + '/' + request.name + ' on ' + request.operation"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("plain", "", "a: b"), "admit"},
			{configMap("rejected", "", "reject: yes"), "deny:rejected configmaps/rejected on CREATE"},
		},
	},
	{
		name: "resource-names",
		setup: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
      resourceNames: [app-settings]
  validations:
  - expression: "'version' in object.data"
    message: app-settings needs a version
` + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("app-settings", "", "a: b"), "deny:app-settings needs a version"},
			{configMap("other-settings", "", "a: b"), "admit"},
		},
	},
	{
		name: "exclude-resource-rules",
		setup: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
    excludeResourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
      resourceNames: [kube-root-ca.crt, exempt]
  validations:
  - expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"
    message: ConfigMaps need an app label
` + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("exempt", "x: y", ""), "admit"},
			{configMap("unlabelled", "x: y", ""), "deny:ConfigMaps need an app label"},
		},
	},
	{
		name: "warn-message-expression",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.metadata.annotations) || !('deprecated' in object.metadata.annotations)"
    messageExpression: "'ConfigMap ' + object.metadata.name + ' is deprecated: ' + object.metadata.annotations.deprecated"
`) + "---" + cmBinding("[Warn]", ""),
		objects: []matrixObject{
			{`
apiVersion: v1
kind: ConfigMap
metadata: {name: old, namespace: NS, annotations: {deprecated: use new-config}}
`, "warn:ConfigMap old is deprecated: use new-config"},
			{configMap("current", "", ""), "admit"},
		},
	},
	{
		name:  "no-binding",
		setup: cmPolicy("  validations:\n  - expression: \"false\"\n    message: never admitted\n"),
		objects: []matrixObject{
			{configMap("free", "", ""), "admit"},
		},
		unbound: true,
	},
	{
		name: "deployment-limits",
		setup: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments, statefulsets, daemonsets]
  variables:
  - name: containers
    expression: object.spec.template.spec.containers
  validations:
  - expression: "variables.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits && 'cpu' in c.resources.limits)"
    messageExpression: "'containers without cpu and memory limits: ' + variables.containers.filter(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) || !('cpu' in c.resources.limits)).map(c, c.name).join(', ')"
` + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{deployment("unlimited", digest), "deny:containers without cpu and memory limits: app"},
			{`
apiVersion: apps/v1
kind: Deployment
metadata: {name: limited, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: limited}}
  template:
    metadata: {labels: {app: limited}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources: {limits: {cpu: 500m, memory: 256Mi}}
`, "admit"},
		},
	},
	{
		name: "two-bindings-deny-and-warn",
		setup: cmPolicy(`  validations:
  - expression: "'team' in object.metadata.labels"
    message: a team label is required
`) + "---" + cmBinding("[Warn]", "") + `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding-strict}
spec:
  policyName: NS-policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}
    objectSelector: {matchLabels: {strict: "yes"}}
`,
		objects: []matrixObject{
			{configMap("lenient", "app: x", ""), "warn:a team label is required"},
			{configMap("strict", "strict: \"yes\"", ""), "deny:a team label is required & warn:a team label is required"},
			{configMap("labelled", "team: a, strict: \"yes\"", ""), "admit"},
		},
	},
}

func nsConfigMap(ns, data string) string {
	return `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm-` + ns + `-` + shortHash(data) + `, namespace: ` + ns + `}
data: {` + data + `}
`
}

func shortHash(s string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 6)
	for i := range b {
		b[i] = hex[h>>(4*i)&0xf]
	}
	return string(b)
}
