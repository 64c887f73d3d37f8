package policy

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Action is what a result asks of the gate.
type Action string

const (
	// Deny: a binding with validationActions Deny rejected the object.
	Deny Action = "Deny"
	// Warn: a binding with validationActions Warn returned a warning.
	Warn Action = "Warn"
	// Audit: a binding with validationActions Audit recorded a failure.
	Audit Action = "Audit"
	// NoVerdict: the gate cannot evaluate the policy offline for this object
	// (an authorizer check, an unknown Namespace the policy looks at).
	NoVerdict Action = "NoVerdict"
	// Ignored: an error that failurePolicy Ignore swallowed; the API server
	// admits silently, the gate says so.
	Ignored Action = "Ignored"
	// Unbound: a policy or binding that checks nothing in this render.
	Unbound Action = "Unbound"
	// Note: something the gate does not evaluate (auditAnnotations).
	Note Action = "Note"
)

// Result is one policy verdict on one object (Index ≥ 0) or on the whole
// render (Index −1).
type Result struct {
	Action  Action
	Policy  string
	Binding string
	// Index is the object's position in the render, −1 for none.
	Index int
	// Message is the API server's text without the object prefix: for Deny
	// "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: …", for
	// Warn the warning, for Audit the failure message, otherwise the gate's
	// explanation.
	Message string
	// Status is the full error message the API server returns for a Deny
	// (`<resource> "<name>" is forbidden: …`), with its reason and code.
	Status string
	Reason metav1.StatusReason
	Code   int32
}

// Report is the outcome of one evaluation.
type Report struct {
	Results []Result
	// Evaluated counts object × binding pairs that matched and ran.
	Evaluated int
}
