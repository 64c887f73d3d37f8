package schema

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const deployment = `apiVersion: apps/v1
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
`

const fluxKustomization = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`

// on is the default config with the target version named.
func on() *config.Spec {
	c := config.Default()
	c.Schema.KubernetesVersion = "1.37"
	return c
}

func TestSchema(t *testing.T) {
	ruletest.Run(t, Schema, onAll([]ruletest.Case{
		{Name: "valid deployment", Input: deployment},
		{Name: "typo in a field name", Input: deployment + "  replica: 3\n",
			Want: []string{`spec.replica: strict decoding error: unknown field "spec.replica"`}},
		{Name: "wrong type", Input: "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: eighty}]}\n",
			Want: []string{"spec.ports[0].port: Invalid value"}},
		{Name: "Certificate without issuerRef", Input: "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, namespace: a}\nspec: {secretName: c}\n",
			Want: []string{"spec.issuerRef: Required value"}},
		{Name: "Flux Kustomization (built-in CRD)", Input: fluxKustomization},
		{Name: "Flux Kustomization without prune", Input: strings.Replace(fluxKustomization, "  prune: true\n", "", 1),
			Want: []string{"spec.prune: Required value"}},
		{Name: "CRD CEL rule", Input: celBroken,
			Want: []string{"spec.venafi: Invalid value: exactly one of tpp, cloud, or ngts must be configured"}},
	}))
}

func onAll(cs []ruletest.Case) []ruletest.Case {
	for i := range cs {
		if cs[i].Config == nil {
			cs[i].Config = on()
		}
	}
	return cs
}

// TestOnByDefault: the default config validates against the newest
// embedded version; `schema: off` is the way out.
func TestOnByDefault(t *testing.T) {
	off := config.Default()
	off.Rules["schema"] = "off"
	ruletest.Run(t, Schema, []ruletest.Case{
		{Name: "default config", Input: deployment + "  replica: 3\n",
			Want: []string{`spec.replica: strict decoding error: unknown field "spec.replica"`}},
		{Name: "turned off", Input: deployment + "  replica: 3\n", Config: off},
	})
	unknownOff := config.Default()
	unknownOff.Rules["schema-unknown"] = "off"
	ruletest.Run(t, Unknown, []ruletest.Case{
		{Name: "default config", Input: "apiVersion: example.com/v1\nkind: Potato\nmetadata: {name: p}\n",
			Want: []string{`: no schema for kind "Potato"`}},
		{Name: "turned off", Input: "apiVersion: example.com/v1\nkind: Potato\nmetadata: {name: p}\n", Config: unknownOff},
	})
}

func TestUnknown(t *testing.T) {
	potato := "apiVersion: example.com/v1\nkind: Potato\nmetadata: {name: p}\n"
	ignore := on()
	ignore.Schema.IgnoreMissing = []string{"example.com/Potato"}
	ruletest.Run(t, Unknown, onAll([]ruletest.Case{
		{Name: "no schema anywhere", Input: potato, Want: []string{`: no schema for kind "Potato"`}},
		{Name: "allowed by schema.ignoreMissing", Input: potato, Config: ignore},
		{Name: "built-in kind", Input: deployment},
	}))
}

func TestRemoved(t *testing.T) {
	ruletest.Run(t, Removed, onAll([]ruletest.Case{
		{Name: "extensions/v1beta1 Deployment", Input: "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: web}\n",
			Want: []string{": extensions/v1beta1 Deployment is no longer served since Kubernetes 1.16; use apps/v1 Deployment"}},
		{Name: "apps/v1", Input: deployment},
	}))
}

func TestDeprecated(t *testing.T) {
	old := on()
	old.Schema.KubernetesVersion = "1.34"
	mapV1beta1 := "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata: {name: p}\nspec: {}\n"
	ruletest.Run(t, Deprecated, onAll([]ruletest.Case{
		{Name: "v1 Endpoints", Input: "apiVersion: v1\nkind: Endpoints\nmetadata: {name: e}\n",
			Want: []string{": v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"}},
		{Name: "deprecated in 1.37", Input: mapV1beta1, Want: []string{": admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy is deprecated in v1.37+"}},
		{Name: "not yet deprecated in 1.34", Input: mapV1beta1, Config: old},
	}))
}

// TestMutants: every schema rule's mutants break a valid render under the
// default config; the deprecation mutant only where a warning stops the
// deploy, and not otherwise (it would be a miss by design).
func TestMutants(t *testing.T) {
	for _, r := range []rules.Rule{Schema, Unknown, Removed} {
		t.Run(r.ID, func(t *testing.T) { ruletest.Mutants(t, r, ruletest.Case{Input: deployment}) })
	}
	failOnWarning := config.Default()
	failOnWarning.FailOn = config.FailOnWarning
	ruletest.Mutants(t, Deprecated, ruletest.Case{Input: deployment, Config: failOnWarning})
	raised := config.Default()
	raised.Rules["api-deprecated"] = "error"
	ruletest.Mutants(t, Deprecated, ruletest.Case{Input: deployment, Config: raised})
	s := &rules.Subject{Resources: ruletest.Parse(t, deployment), Config: config.Default()}
	if Deprecated.Mutants[0].Apply(s) {
		t.Errorf("the deprecation mutant applies where its warning lets the deploy through")
	}
}

// TestNoVerdictWithSchemaOff: when the pass cannot run (here a target
// version with no embedded data), exactly one rule of the family reports
// it as no verdict — schema when it is on, else the first one that is on
// (with schema: off and api-validation on, silence would read as a pass).
func TestNoVerdictWithSchemaOff(t *testing.T) {
	family := []rules.Rule{Deprecated, Removed, APIValidation, Schema, Unknown}
	for _, tc := range []struct {
		name string
		off  []string
		want string // the rule that reports; "" for none
	}{
		{name: "all on", want: "schema"},
		{name: "schema off", off: []string{"schema"}, want: "api-validation"},
		{name: "schema and api-validation off", off: []string{"schema", "api-validation"}, want: "api-removed"},
		{name: "only api-deprecated on", off: []string{"schema", "api-validation", "api-removed", "schema-unknown"}, want: "api-deprecated"},
		{name: "all off", off: []string{"schema", "api-validation", "api-removed", "schema-unknown", "api-deprecated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Schema.KubernetesVersion = "1.99"
			for _, id := range tc.off {
				cfg.Rules[id] = "off"
			}
			objs, err := kio.FromBytes([]byte(deployment))
			if err != nil {
				t.Fatal(err)
			}
			got := rules.Run(&rules.Context{Resources: objs, Config: cfg}, family)
			var by []string
			for _, f := range got {
				if !f.NoVerdict || !strings.Contains(f.Message, "schema validation could not run") {
					t.Errorf("unexpected finding %s: %s", f.Rule, f.Message)
					continue
				}
				by = append(by, f.Rule)
			}
			switch {
			case tc.want == "" && len(by) != 0:
				t.Errorf("reported by %v, want none (every rule of the family is off)", by)
			case tc.want != "" && (len(by) != 1 || by[0] != tc.want):
				t.Errorf("reported by %v, want once by %s", by, tc.want)
			}
		})
	}
}
