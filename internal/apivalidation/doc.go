// Package apivalidation validates built-in Kubernetes objects the way the
// API server does on a create, after the schema: it decodes the request body
// with the API server's own scheme (k8s.io/kubernetes/pkg/api/legacyscheme),
// applies the API server's defaulting, converts the object to the internal
// type and runs the kind's hand-written validation from
// k8s.io/kubernetes/pkg/apis/<group>/validation with the options its
// registry strategy passes on create.
//
// It judges one object alone. What the API server decides from other
// objects or from the cluster is out of its reach: namespace existence and
// lifecycle, ResourceQuota and LimitRange admission, PodSecurity, webhooks,
// ValidatingAdmissionPolicies, ClusterIP and NodePort allocation, RBAC
// escalation checks, and authorization of a policy's paramKind.
package apivalidation
