// Package policy evaluates Kubernetes ValidatingAdmissionPolicies
// (admissionregistration.k8s.io/v1) offline, on a rendered stream, with the
// API server's own admission library: k8s.io/apiserver's validating policy
// dispatcher, matcher and CEL environment, at the same Kubernetes release as
// the rest of the project.
//
// Each rendered object is judged as the API server would judge its CREATE:
// request.operation CREATE, object the rendered object, oldObject null, the
// namespace from the render's Namespace objects or from labels given by the
// caller. What the gate cannot know offline is reported, never assumed:
//
//   - an authorizer check in an expression is a no-verdict result;
//   - a namespaceSelector or namespaceObject on an object whose Namespace is
//     neither in the render nor given is a no-verdict result;
//   - a policy no binding binds, or whose bindings match no object, is an
//     Unbound result naming it (a gate that checks nothing must say so).
//
// Known differences from a live API server: the gate sees the object as
// rendered, before the API server's defaulting and mutating admission
// (a Deployment without replicas has no spec.replicas here), and
// request.userInfo is empty because the gate does not know who will apply.
// matchPolicy Equivalent reaches the other served versions of a CRD the
// gate knows (converted by changing apiVersion, as the API server converts
// for a CRD without a conversion webhook; a webhook-converted CRD is a
// no-verdict result); a built-in object that a rule names only in another
// version is a no-verdict result (the gate has no built-in conversions).
//
// The package takes []*yaml.RNode and returns plain [Result] values; the
// rule that turns them into findings lives with the rules.
package policy
