package schema

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mutate derives broken copies of an object the API server accepts: each
// mutant breaks one thing the issue lists (unknown field, wrong type,
// missing required, enum, format, removed apiVersion).
func mutate(s sample) []sample {
	var out []sample
	add := func(what, gap string, edit func(n *yaml.RNode) bool) {
		n := s.node.Copy()
		if edit(n) {
			out = append(out, sample{origin: "mutant " + what + " of " + s.origin, node: n, expectDisagree: gap})
		}
	}
	kind := s.node.GetKind()
	add("unknown field", "", func(n *yaml.RNode) bool {
		if spec := n.Field("spec"); spec != nil && spec.Value.YNode().Kind == yaml.MappingNode {
			return spec.Value.PipeE(yaml.SetField("gateUnknownField", yaml.NewScalarRNode("x"))) == nil
		}
		return n.PipeE(yaml.SetField("gateUnknownField", yaml.NewScalarRNode("x"))) == nil
	})
	add("wrong type (metadata.labels)", "", func(n *yaml.RNode) bool {
		return n.PipeE(yaml.Lookup("metadata"), yaml.SetField("labels", yaml.NewListRNode("a"))) == nil
	})
	if has(s.node, "spec", "replicas") {
		add("wrong type (spec.replicas)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.Lookup("spec"), yaml.SetField("replicas", yaml.NewStringRNode("three"))) == nil
		})
	}
	if has(s.node, "spec", "template", "spec", "containers") {
		add("missing required (containers[0].name)", "", func(n *yaml.RNode) bool {
			c, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[0]"))
			return err == nil && c != nil && c.PipeE(yaml.Clear("name")) == nil
		})
	}
	switch kind {
	case "Deployment", "DaemonSet", "ReplicaSet", "StatefulSet":
		if s.node.GetApiVersion() == "apps/v1" {
			add("removed apiVersion (extensions/v1beta1)", "", setAPIVersion("extensions/v1beta1"))
			add("removed apiVersion (apps/v1beta2)", "", setAPIVersion("apps/v1beta2"))
		}
	case "Ingress":
		add("removed apiVersion (networking.k8s.io/v1beta1)", "", setAPIVersion("networking.k8s.io/v1beta1"))
	case "CronJob":
		add("removed apiVersion (batch/v1beta1)", "", setAPIVersion("batch/v1beta1"))
	case "PodDisruptionBudget":
		add("removed apiVersion (policy/v1beta1)", "", setAPIVersion("policy/v1beta1"))
	case "HorizontalPodAutoscaler":
		add("removed apiVersion (autoscaling/v2beta2)", "", setAPIVersion("autoscaling/v2beta2"))
	case "Secret":
		add("bad format (data not base64)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.SetField("data", yaml.MustParse("k: '%%% not base64'"))) == nil
		})
	case "Service":
		add("enum (spec.type)", "built-in enum: hand-written Go validation, not in the OpenAPI", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.Lookup("spec"), yaml.SetField("type", yaml.NewStringRNode("Potato"))) == nil
		})
	case "Certificate":
		add("missing required (spec.issuerRef)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.Lookup("spec"), yaml.Clear("issuerRef")) == nil
		})
		add("enum (spec.privateKey.algorithm)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "privateKey"), yaml.SetField("algorithm", yaml.NewStringRNode("DSA"))) == nil
		})
	case "Rollout":
		add("enum-like (spec.strategy.canary.steps wrong type)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "strategy"), yaml.SetField("canary", yaml.NewStringRNode("yes"))) == nil
		})
	}
	return out
}

func setAPIVersion(gv string) func(n *yaml.RNode) bool {
	return func(n *yaml.RNode) bool { n.SetApiVersion(gv); return true }
}

func has(n *yaml.RNode, path ...string) bool {
	f, err := n.Pipe(yaml.Lookup(path...))
	return err == nil && f != nil
}

// handWritten are mutants that need an object the corpus lacks: the CEL
// rule of cert-manager's Issuer, and the test Widget CRD's enum, format,
// pattern, bounds and CEL rule.
func handWritten(t *testing.T) []sample {
	t.Helper()
	docs := []struct{ what, yaml string }{
		{"valid Widget", "spec: {size: small, min: 1, max: 2, email: a@example.com, window: 5m, tags: [a, b]}"},
		{"CEL violation (min > max)", "spec: {size: small, min: 3, max: 2}"},
		{"enum (size)", "spec: {size: huge}"},
		{"format (email)", "spec: {size: small, email: not-an-email}"},
		{"format (duration)", "spec: {size: small, window: five minutes}"},
		{"pattern (tags)", "spec: {size: large, tags: [UPPER]}"},
		{"maxItems (tags)", "spec: {size: large, tags: [a, b, c, d]}"},
		{"maximum (max)", "spec: {size: large, max: 101}"},
		{"missing required (size)", "spec: {min: 1}"},
		{"unknown field", "spec: {size: small, colour: red}"},
		{"wrong type", "spec: {size: small, min: one}"},
	}
	var out []sample
	for _, d := range docs {
		n := yaml.MustParse("apiVersion: gate.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n" + d.yaml)
		out = append(out, sample{origin: "hand-written " + d.what, node: n})
	}
	issuers := []struct{ what, spec string }{
		{"valid venafi Issuer", "venafi: {zone: z, tpp: {url: 'https://tpp.example.com/vedsdk', credentialsRef: {name: c}}}"},
		{"CEL violation (venafi tpp and cloud)", "venafi: {zone: z, tpp: {url: 'https://tpp.example.com/vedsdk', credentialsRef: {name: c}}, cloud: {apiTokenSecretRef: {name: t, key: k}}}"},
		{"valid selfSigned Issuer", "selfSigned: {}"},
	}
	for _, is := range issuers {
		n := yaml.MustParse("apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: i, namespace: default}\nspec: {" + strings.TrimSpace(is.spec) + "}")
		out = append(out, sample{origin: "hand-written " + is.what, node: n})
	}
	return out
}
