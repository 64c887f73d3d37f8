package policy

import "strconv"

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
	// "audit:<substring>", "ignored:<substring>", "noverdict:<substring>";
	// several joined by " & ". A kind given more than once (warn, audit,
	// ignored, noverdict) wants that many results, in any order.
	want string
}

type matrixCase struct {
	name    string
	setup   string
	objects []matrixObject
	// unbound: the gate must report the policy as checking nothing.
	unbound bool
	// server gives, by object index, the API server's verdict ("admit",
	// "deny:<substring>") where the gate deliberately has none: an
	// authorizer check, which only the API server can answer for the user
	// who applies (the test cluster runs --authorization-mode=AlwaysAllow,
	// so every check is allowed). The matrix records both sides; this is
	// its one deliberate difference.
	server map[int]string
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
	{
		name: "reason-invalid",
		setup: cmPolicy(`  validations:
  - expression: "!object.metadata.name.endsWith('-tmp')"
    messageExpression: "'temporary ConfigMap ' + object.metadata.name + ' must not be deployed'"
    reason: Invalid
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("scratch-tmp", "", ""), "deny:temporary ConfigMap scratch-tmp must not be deployed"},
			{configMap("scratch", "", ""), "admit"},
		},
	},
	{
		name: "reason-request-entity-too-large",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.data) || object.data.all(k, size(object.data[k]) <= 16)"
    message: ConfigMap values are limited to 16 bytes each
    reason: RequestEntityTooLarge
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("blob", "", "cert: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'"), "deny:ConfigMap values are limited to 16 bytes each"},
			{configMap("tiny", "", "mode: fast"), "admit"},
		},
	},
	{
		name: "params-selector-each-warn",
		setup: `
apiVersion: v1
kind: ConfigMap
metadata: {name: ban-debug, namespace: NS, labels: {role: params}}
data: {key: debug}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ban-trace, namespace: NS, labels: {role: params}}
data: {key: trace}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ban-profile, namespace: NS, labels: {role: params}}
data: {key: profile}
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
    messageExpression: "'key ' + params.data.key + ' is discouraged by ' + params.metadata.name"
` + "---" + cmBinding("[Warn]", `  paramRef:
    namespace: NS
    selector: {matchLabels: {role: params}}
    parameterNotFoundAction: Deny
`),
		objects: []matrixObject{
			{configMap("noisy", "", "debug: 'on', trace: 'on', level: info"),
				"warn:key debug is discouraged by ban-debug & warn:key trace is discouraged by ban-trace"},
			{configMap("profiled", "", "profile: 'on'"), "warn:key profile is discouraged by ban-profile"},
			{configMap("quiet", "", "level: info"), "admit"},
		},
	},
	{
		name: "params-crd-selector",
		setup: limitCRD + `---
apiVersion: policy.gate.example.com/v1
kind: GateLimit
metadata: {name: NS-soft, labels: {matrix: NS}}
spec: {maxKeys: 2}
---
apiVersion: policy.gate.example.com/v1
kind: GateLimit
metadata: {name: NS-hard, labels: {matrix: NS}}
spec: {maxKeys: 3}
---
apiVersion: policy.gate.example.com/v1
kind: GateLimit
metadata: {name: NS-other, labels: {matrix: elsewhere}}
spec: {maxKeys: 0}
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
    messageExpression: "object.metadata.name + ' has ' + string(size(object.data)) + ' keys, GateLimit ' + params.metadata.name + ' allows ' + string(params.spec.maxKeys)"
` + "---" + cmBinding("[Warn]", `  paramRef:
    selector: {matchLabels: {matrix: NS}}
    parameterNotFoundAction: Deny
`),
		objects: []matrixObject{
			{configMap("three", "", "a: '1', b: '2', c: '3'"), "warn:three has 3 keys, GateLimit NS-soft allows 2"},
			{configMap("four", "", "a: '1', b: '2', c: '3', d: '4'"),
				"warn:four has 4 keys, GateLimit NS-soft allows 2 & warn:four has 4 keys, GateLimit NS-hard allows 3"},
			{configMap("two", "", "a: '1', b: '2'"), "admit"},
		},
	},
	{
		name: "params-crd-not-found-deny",
		setup: limitCRD + `---
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
` + "---" + cmBinding("[Deny]", `  paramRef: {name: NS-missing-limit, parameterNotFoundAction: Deny}
`),
		objects: []matrixObject{
			{configMap("any", "", "a: '1'"), "deny:no params found for policy binding with `Deny` parameterNotFoundAction"},
			{configMap("empty", "", ""), "deny:no params found for policy binding with `Deny` parameterNotFoundAction"},
		},
	},
	{
		name: "params-selector-none-allow",
		setup: `
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: NS, labels: {role: other}}
data: {key: debug}
---
` + cmPolicy(`  paramKind: {apiVersion: v1, kind: ConfigMap}
  validations:
  - expression: "!(params.data.key in object.data)"
    message: banned key
`) + "---" + cmBinding("[Deny]", `  paramRef:
    namespace: NS
    selector: {matchLabels: {role: params}}
    parameterNotFoundAction: Allow
`),
		objects: []matrixObject{
			{configMap("debugging", "", "debug: 'on'"), "admit"},
		},
	},
	{
		name:  "match-policy-equivalent",
		setup: widgetCRD + "---" + widgetPolicy("Equivalent") + "---" + widgetBinding,
		objects: []matrixObject{
			{widget("matrix.gate.example.com/v1beta1", "old-big", 20), "deny:widget old-big (seen as matrix.gate.example.com/v1) is larger than 10"},
			{widget("matrix.gate.example.com/v1", "new-big", 20), "deny:widget new-big (seen as matrix.gate.example.com/v1) is larger than 10"},
			{widget("matrix.gate.example.com/v1beta1", "old-small", 5), "admit"},
		},
	},
	{
		name:  "match-policy-exact",
		setup: widgetCRD + "---" + widgetPolicy("Exact") + "---" + widgetBinding,
		objects: []matrixObject{
			{widget("matrix.gate.example.com/v1beta1", "old-big", 20), "admit"},
			{widget("matrix.gate.example.com/v1", "new-big", 20), "deny:widget new-big (seen as matrix.gate.example.com/v1) is larger than 10"},
		},
	},
	{
		name: "namespace-object-expression",
		setup: `
apiVersion: v1
kind: Namespace
metadata: {name: NS-payments, labels: {owner: payments}}
---
apiVersion: v1
kind: Namespace
metadata: {name: NS-shared}
---
` + cmPolicy(`  validations:
  - expression: "has(namespaceObject.metadata.labels) && 'owner' in namespaceObject.metadata.labels && has(object.metadata.labels) && object.metadata.labels.team == namespaceObject.metadata.labels.owner"
    messageExpression: "'namespace ' + namespaceObject.metadata.name + (has(namespaceObject.metadata.labels) && 'owner' in namespaceObject.metadata.labels ? ' belongs to team ' + namespaceObject.metadata.labels.owner : ' has no owner')"
`) + `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding}
spec:
  policyName: NS-policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [NS-payments, NS-shared]}]}
`,
		objects: []matrixObject{
			{configMapIn("NS-payments", "search-config", "team: search", ""), "deny:namespace NS-payments belongs to team payments"},
			{configMapIn("NS-payments", "payments-config", "team: payments", ""), "admit"},
			{configMapIn("NS-shared", "shared-config", "team: payments", ""), "deny:namespace NS-shared has no owner"},
		},
	},
	{
		name: "variables-chain",
		setup: `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  variables:
  - name: containers
    expression: "object.spec.template.spec.containers + (has(object.spec.template.spec.initContainers) ? object.spec.template.spec.initContainers : [])"
  - name: images
    expression: variables.containers.map(c, c.image)
  - name: untrusted
    expression: "variables.images.filter(i, !i.startsWith('registry.example.com/'))"
  validations:
  - expression: size(variables.untrusted) == 0
    messageExpression: "string(size(variables.untrusted)) + ' of ' + string(size(variables.images)) + ' images come from untrusted registries: ' + variables.untrusted.join(', ')"
` + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{deployment("hub", "docker.io/library/nginx:1.27"), "deny:1 of 1 images come from untrusted registries: docker.io/library/nginx:1.27"},
			{`
apiVersion: apps/v1
kind: Deployment
metadata: {name: mixed, namespace: NS}
spec:
  selector: {matchLabels: {app: mixed}}
  template:
    metadata: {labels: {app: mixed}}
    spec:
      initContainers:
      - {name: migrate, image: quay.io/acme/migrate:2}
      containers:
      - {name: app, image: registry.example.com/shop/api:1.4}
`, "deny:1 of 2 images come from untrusted registries: quay.io/acme/migrate:2"},
			{deployment("trusted", digest), "admit"},
		},
	},
	{
		name: "authorizer",
		setup: cmPolicy(`  variables:
  - name: sa
    expression: "has(object.data) && 'serviceAccount' in object.data ? object.data.serviceAccount : ''"
  validations:
  - expression: "variables.sa == '' || !authorizer.serviceAccount(object.metadata.namespace, variables.sa).group('').resource('secrets').namespace(object.metadata.namespace).check('delete').allowed()"
    messageExpression: "'service account ' + variables.sa + ' may delete secrets: use a least-privilege account'"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("job-settings", "", "serviceAccount: deployer"), "noverdict:asks the authorizer"},
			{configMap("plain-settings", "", "level: info"), "admit"},
		},
		server: map[int]string{0: "deny:service account deployer may delete secrets: use a least-privilege account"},
	},
	{
		name: "authorizer-allowed",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.metadata.annotations) || !('gate.example.com/reads-secret' in object.metadata.annotations) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).name(object.metadata.annotations['gate.example.com/reads-secret']).check('get').allowed()"
    message: the applying user cannot read the referenced Secret
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{`
apiVersion: v1
kind: ConfigMap
metadata: {name: tls-settings, namespace: NS, annotations: {gate.example.com/reads-secret: tls-cert}}
`, "noverdict:asks the authorizer"},
			{configMap("no-secret", "", ""), "admit"},
		},
		server: map[int]string{0: "admit"},
	},
	{
		name: "failure-policy-fail-warn",
		setup: cmPolicy(`  failurePolicy: Fail
  validations:
  - expression: "int(object.data.replicas) <= 5"
    message: at most 5 replicas
`) + "---" + cmBinding("[Warn]", ""),
		objects: []matrixObject{
			{configMap("unset", "", "other: x"), "warn:no such key: replicas"},
			{configMap("many", "", "replicas: '9'"), "warn:at most 5 replicas"},
			{configMap("few", "", "replicas: '2'"), "admit"},
		},
	},
	{
		name: "failure-policy-ignore-variable",
		setup: cmPolicy(`  failurePolicy: Ignore
  variables:
  - name: port
    expression: "int(object.data.port)"
  validations:
  - expression: "variables.port >= 1024"
    messageExpression: "'port ' + string(variables.port) + ' is privileged'"
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("no-port", "", "host: db"), "ignored:no such key: port"},
			{configMap("bad-port", "", "port: http"), "ignored:"},
			{configMap("low-port", "", "port: '80'"), "deny:port 80 is privileged"},
			{configMap("high-port", "", "port: '8080'"), "admit"},
		},
	},
	{
		name: "match-condition-error-ignore",
		setup: cmPolicy(`  failurePolicy: Ignore
  matchConditions:
  - name: by-mode
    expression: "object.data.mode == 'checked'"
  validations:
  - expression: "'owner' in object.data"
    message: checked ConfigMaps need an owner
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("unchecked", "", "x: y"), "ignored:no such key: mode"},
			{configMap("checked", "", "mode: checked"), "deny:checked ConfigMaps need an owner"},
			{configMap("other-mode", "", "mode: off"), "admit"},
		},
	},
	{
		name: "match-conditions-all-must-hold",
		setup: cmPolicy(`  matchConditions:
  - name: labelled
    expression: "has(object.metadata.labels)"
  - name: production
    expression: "object.metadata.labels.?env.orValue('') == 'prod'"
  - name: not-exempt
    expression: "!('gate.example.com/exempt' in object.metadata.labels)"
  validations:
  - expression: "has(object.data) && 'owner' in object.data"
    message: production ConfigMaps must name an owner
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("prod", "env: prod", "a: b"), "deny:production ConfigMaps must name an owner"},
			{configMap("prod-exempt", "env: prod, gate.example.com/exempt: 'yes'", "a: b"), "admit"},
			{configMap("staging", "env: staging", "a: b"), "admit"},
			{configMap("prod-owned", "env: prod", "owner: me"), "admit"},
		},
	},
	{
		name: "message-expression-fallback",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.data) || !('disabled' in object.data)"
    messageExpression: "'disabled because ' + object.data.reason"
    message: disabled ConfigMaps must not be deployed
`) + "---" + cmBinding("[Deny]", ""),
		objects: []matrixObject{
			{configMap("explained", "", "disabled: 'true', reason: migration"), "deny:disabled because migration"},
			{configMap("unexplained", "", "disabled: 'true'"), "deny:disabled ConfigMaps must not be deployed"},
			{configMap("multiline", "", `disabled: 'true', reason: "one\ntwo"`), "deny:disabled ConfigMaps must not be deployed"},
			{configMap("enabled", "", "reason: none"), "admit"},
		},
	},
	{
		name: "audit-message-expression",
		setup: cmPolicy(`  validations:
  - expression: "!has(object.data) || size(object.data) <= 1"
    messageExpression: "'ConfigMap ' + object.metadata.name + ' has ' + string(size(object.data)) + ' keys'"
`) + "---" + cmBinding("[Audit, Warn]", ""),
		objects: []matrixObject{
			{configMap("wide", "", "a: '1', b: '2'"), "audit:ConfigMap wide has 2 keys & warn:ConfigMap wide has 2 keys"},
			{configMap("narrow", "", "a: '1'"), "admit"},
		},
	},
	{
		name: "namespace-creation",
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
      resources: [namespaces]
  validations:
  - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
    messageExpression: "'namespace ' + object.metadata.name + ' needs an owner label'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-binding}
spec:
  policyName: NS-policy
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [NS-team-a, NS-team-b]}]}
`,
		objects: []matrixObject{
			{"apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-team-a}\n", "deny:namespace NS-team-a needs an owner label"},
			{"apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-team-b, labels: {owner: team-b}}\n", "admit"},
			{"apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-team-c}\n", "admit"},
		},
	},
	{
		name: "binding-exclude-resource-rules",
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
      resources: [configmaps, secrets]
  validations:
  - expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"
    messageExpression: "object.kind + ' ' + object.metadata.name + ' needs an app label'"
` + "---" + cmBinding("[Deny]", `    excludeResourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [secrets]
`),
		objects: []matrixObject{
			{"apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: NS}\nstringData: {password: x}\n", "admit"},
			{configMap("settings", "", ""), "deny:ConfigMap settings needs an app label"},
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

func configMapIn(ns, name, labels, data string) string {
	return `
apiVersion: v1
kind: ConfigMap
metadata: {name: ` + name + `, namespace: ` + ns + `, labels: {` + labels + `}}
data: {` + data + `}
`
}

// widgetCRD serves Widget in two versions without a conversion webhook,
// as a CRD that is mid-migration does.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.matrix.gate.example.com}
spec:
  group: matrix.gate.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`

func widgetPolicy(matchPolicy string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-policy}
spec:
  matchConstraints:
    matchPolicy: ` + matchPolicy + `
    resourceRules:
    - apiGroups: [matrix.gate.example.com]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [widgets]
  validations:
  - expression: object.spec.size <= 10
    messageExpression: "'widget ' + object.metadata.name + ' (seen as ' + object.apiVersion + ') is larger than 10'"
`
}

var widgetBinding = cmBinding("[Deny]", "")

func widget(apiVersion, name string, size int) string {
	return `
apiVersion: ` + apiVersion + `
kind: Widget
metadata: {name: ` + name + `, namespace: NS}
spec: {size: ` + strconv.Itoa(size) + `}
`
}
