package rollouts

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// ControllerVersion is the Argo Rollouts release whose validation
// rollout-invalid-spec runs (the github.com/argoproj/argo-rollouts module
// of go.mod; a test keeps the two equal).
const ControllerVersion = "v1.10.1"

const ruleInvalidSpec = "rollout-invalid-spec"

// InvalidSpec fires on a Rollout the Argo Rollouts controller's own
// validation rejects.
var InvalidSpec = rules.Rule{
	ID: ruleInvalidSpec, Default: finding.SeverityError, Family: "rollouts",
	Doc: "the Argo Rollouts " + ControllerVersion + " controller's own validation (ValidateRollout, then ValidateRolloutReferencedResources on the Services, AnalysisTemplates, Ingresses and Istio VirtualServices of the render) rejects the Rollout: maxSurge and maxUnavailable both 0, setWeight outside 0–100, an empty step, a negative pause, a pod template the ReplicaSet validation refuses, an analysis that runs forever; with the controller's field path and message. " +
		"Missing references, and errors a narrower rule reports on the same object (a Service selector that misses the pods, Services that are the same or unset), are left to that rule (rollout-analysis-ref, rollout-*-services, rollout-service-selector, rollout-traffic-ref, rollout-workload-ref) unless it is off or below error; Ambassador Mappings and App Mesh routers are not read",
	Outage:   "the CRD schema accepts the Rollout, Argo CD syncs it green, and the controller marks it InvalidSpec: nothing rolls out, found only after the deploy",
	Fix:      "correct the field the message names, as the Argo Rollouts controller says (its field path and message are in the finding); `kubectl argo rollouts lint -f` gives the same message for the Rollout alone",
	Mutation: "set a canary step's setWeight to 120; set maxSurge and maxUnavailable to 0",
	Follows:  follows,
	Reads:    reads,
	Check:    checkInvalidSpec,
	Mutants: []rules.Mutant{
		{Name: "set the first canary step's setWeight to 120", Apply: rules.OnResources(onCanary(setWeight120))},
		{Name: "set maxSurge and maxUnavailable to 0", Apply: rules.OnResources(onCanary(zeroSurge))},
	},
}

// ControllerValidation runs the Argo Rollouts controller's validation on
// one Rollout of the render (internal/rolloutvalidation.Validate): lookup
// finds the objects it names.
type ControllerValidation func(ro *yaml.RNode, lookup func(group, kind, namespace, name string) *yaml.RNode) (field.ErrorList, error)

// controllerValidation is nil in a binary that does not link the
// controller's validation (gate-fn): the rule then says, on each Rollout,
// that it did not run.
var controllerValidation ControllerValidation

// UseControllerValidation makes rollout-invalid-spec run v. The plugin
// calls it with rolloutvalidation.Validate; the KRM function does not link
// that package (it brings in much of the controller) and never calls it.
func UseControllerValidation(v ControllerValidation) { controllerValidation = v }

// checkInvalidSpec runs the controller's validation on every Rollout and
// reports each error at the field the controller names, with its message.
// Without the validation linked, each Rollout gets an info finding that the
// rule did not run: never a silent pass.
func checkInvalidSpec(c *rules.Context) []finding.Finding {
	find := func(group, kind, namespace, name string) *yaml.RNode {
		return lookup(c, group, kind, namespace, name)
	}
	// Each Rollout is validated on its own, the costliest check of the
	// family (~0.1 ms each): on every core.
	return rules.PerObject(rollouts(c), func(ro *yaml.RNode) []finding.Finding {
		if controllerValidation == nil {
			return []finding.Finding{manifest.Finding(ruleInvalidSpec, finding.SeverityInfo, ro, "", nil,
				"not checked: rollout-invalid-spec did not run here; the Argo Rollouts %s controller's validation is linked into the kubectl-gate plugin only (run kubectl gate check on this render)", ControllerVersion)}
		}
		errs, err := controllerValidation(ro, find)
		if err != nil {
			return []finding.Finding{unreadable(ruleInvalidSpec, ro, "", err)}
		}
		var out []finding.Finding
		for _, e := range errs {
			if covered(c, ro, e) {
				continue
			}
			out = append(out, manifest.Finding(ruleInvalidSpec, finding.SeverityError, ro, e.Field, scalarValue(e.BadValue),
				"%s", Message(e)))
		}
		return out
	})
}

// narrower are the controller's errors that a narrower rule of this
// package reports too, in its own words and at the object to fix: the
// Service whose selector misses the pods, the Rollout whose Services are
// the same or missing, the Istio route the VirtualService lacks. text is part of the controller's message (a test
// keeps each equal to the controller's constant); onService says the
// narrower finding is on the Service the error's value names.
var narrower = []struct {
	text, rule string
	onService  bool
}{
	{"has unmatch label", "rollout-service-selector", true},
	{"the same service for the stable and canary services", "rollout-canary-services", false},
	{"the same service for the ping and pong services", "rollout-canary-services", false},
	{"Canary service and Stable service must to be set to use Traffic Routing", "rollout-canary-services", false},
	{"Ping service and Pong service must to be set to use Ping-Pong feature", "rollout-canary-services", false},
	{"the same service for the active and preview services", "rollout-bluegreen-services", false},
	{"is not found in the defined Virtual Service", ruleTrafficRef, false},
}

// covered says that a narrower rule reports the controller's error e on
// ro already, at least as severely as rollout-invalid-spec would: one
// cause, one finding. A narrower rule that is off, lowered, or silent on
// this object leaves the controller's finding in place.
func covered(c *rules.Context, ro *yaml.RNode, e *field.Error) bool {
	for _, n := range narrower {
		if !strings.Contains(e.Detail, n.text) {
			continue
		}
		if severityRank(c, n.rule) < severityRank(c, ruleInvalidSpec) {
			return false
		}
		kind, name := ro.GetKind(), ro.GetName()
		if n.onService {
			svc, ok := e.BadValue.(string)
			if !ok {
				return false
			}
			kind, name = "Service", svc
		}
		return narrowerFindings(c)[n.rule+"|"+kind+"|"+ro.GetNamespace()+"|"+name]
	}
	return false
}

// narrowerFindings runs the narrower rules once per render and keeps which
// objects each fires on (rule|kind|namespace|name).
func narrowerFindings(c *rules.Context) map[string]bool {
	return rules.Memo(c, "rollouts/narrower-findings", func() map[string]bool {
		seen := map[string]bool{}
		for _, r := range []rules.Rule{ServiceSelector, CanaryServices, BlueGreenServices, TrafficRef} {
			for _, f := range r.Check(c) {
				if f.ResourceRef != nil {
					seen[r.ID+"|"+f.ResourceRef.Kind+"|"+f.ResourceRef.Namespace+"|"+f.ResourceRef.Name] = true
				}
			}
		}
		return seen
	})
}

// severityRank orders a rule's configured severity (every rule here
// defaults to error).
func severityRank(c *rules.Context, id string) int {
	switch c.Config.Rules[id] {
	case finding.Off:
		return 0
	case string(finding.SeverityInfo):
		return 1
	case string(finding.SeverityWarning):
		return 2
	}
	return 3
}

// Message is the finding's text for one of the controller's errors: its own
// text, as its InvalidSpec condition carries it.
func Message(e *field.Error) string {
	return fmt.Sprintf("the Argo Rollouts %s controller marks the Rollout InvalidSpec: %s", ControllerVersion, e.Error())
}

// scalarValue keeps a bad value that is one scalar for the finding's
// current value; the message already prints any other.
func scalarValue(v any) any {
	switch v.(type) {
	case string, bool, int, int32, int64, float64:
		return v
	}
	return nil
}

func setWeight120(canary *yaml.RNode) bool {
	steps, err := canary.Pipe(yaml.Lookup("steps"))
	if err != nil || steps == nil {
		return false
	}
	elems, err := steps.Elements()
	if err != nil {
		return false
	}
	for _, s := range elems {
		if s.Field("setWeight") != nil {
			return s.PipeE(yaml.SetField("setWeight", intNode("120"))) == nil
		}
	}
	return false
}

func zeroSurge(canary *yaml.RNode) bool {
	return canary.PipeE(yaml.SetField("maxSurge", intNode("0"))) == nil &&
		canary.PipeE(yaml.SetField("maxUnavailable", intNode("0"))) == nil
}

func intNode(v string) *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: v})
}
