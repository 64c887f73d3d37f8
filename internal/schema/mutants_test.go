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
		add("enum (spec.type)", "", func(n *yaml.RNode) bool {
			return n.PipeE(yaml.Lookup("spec"), yaml.SetField("type", yaml.NewStringRNode("Potato"))) == nil
		})
		add("port out of range (spec.ports[0].port)", "", func(n *yaml.RNode) bool {
			p, err := n.Pipe(yaml.Lookup("spec", "ports", "[0]"))
			return err == nil && p != nil && p.PipeE(yaml.SetField("port", yaml.NewScalarRNode("70000"))) == nil
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
	out = append(out, handWrittenClasses(s)...)
	return out
}

// handWrittenClasses are the mutants only the API server's hand-written
// validation of a kind refuses (internal/apivalidation): what the published
// OpenAPI does not say. Each applies to every object of the corpus it fits:
// workloads, Pods and Services, and names, labels and annotations of all.
func handWrittenClasses(s sample) []sample {
	var out []sample
	add := func(what string, edit func(n *yaml.RNode) bool) {
		n := s.node.Copy()
		if edit(n) {
			out = append(out, sample{origin: "mutant " + what + " of " + s.origin, node: n, class: what})
		}
	}
	meta := func(field, key, value string) func(n *yaml.RNode) bool {
		return func(n *yaml.RNode) bool {
			return n.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", field), yaml.SetField(key, yaml.NewStringRNode(value))) == nil
		}
	}
	add("DNS-1123 name (metadata.name Bad_Name)", func(n *yaml.RNode) bool {
		return n.PipeE(yaml.Lookup("metadata"), yaml.SetField("name", yaml.NewStringRNode("Bad_Name"))) == nil
	})
	add("label key syntax", meta("labels", "bad key!", "x"))
	add("label value syntax", meta("labels", "team", "a b"))
	add("annotation key syntax", meta("annotations", "-bad.example.com/x", "x"))

	pod := podSpecPath(s.node)
	if pod == nil {
		return out
	}
	containers := append(append([]string{}, pod...), "containers")
	first := append(append([]string{}, containers...), "[0]")
	inFirst := func(edit func(c *yaml.RNode) error) func(n *yaml.RNode) bool {
		return func(n *yaml.RNode) bool {
			c, err := n.Pipe(yaml.Lookup(first...))
			return err == nil && c != nil && edit(c) == nil
		}
	}
	add("empty containers", func(n *yaml.RNode) bool {
		return n.PipeE(yaml.Lookup(pod...), yaml.SetField("containers", yaml.NewListRNode())) == nil
	})
	add("request above limit (cpu)", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("resources", yaml.MustParse("{requests: {cpu: '2'}, limits: {cpu: '1'}}")))
	}))
	add("quantity format (memory 1Gb)", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("resources", yaml.MustParse("{limits: {memory: 1Gb}}")))
	}))
	add("enum (imagePullPolicy Sometimes)", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode("Sometimes")))
	}))
	add("port out of range (containerPort 80800)", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("ports", yaml.MustParse("[{containerPort: 80800}]")))
	}))
	add("duplicate port names", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("ports", yaml.MustParse("[{name: http, containerPort: 8080}, {name: http, containerPort: 8081}]")))
	}))
	add("duplicate container names", func(n *yaml.RNode) bool {
		cs, err := n.Pipe(yaml.Lookup(containers...))
		if err != nil || cs == nil || len(cs.Content()) == 0 {
			return false
		}
		cs.YNode().Content = append(cs.YNode().Content, yaml.CopyYNode(cs.Content()[0]))
		return true
	})
	add("probe without a handler", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("readinessProbe", yaml.MustParse("{periodSeconds: 5}")))
	}))
	add("probe with two handlers", inFirst(func(c *yaml.RNode) error {
		return c.PipeE(yaml.SetField("livenessProbe", yaml.MustParse("{httpGet: {path: /, port: 8080}, tcpSocket: {port: 8080}}")))
	}))
	if tmpl := templateLabelsPath(s.node); tmpl != nil {
		add("selector does not match the template", func(n *yaml.RNode) bool {
			ml, err := n.Pipe(yaml.Lookup("spec", "selector", "matchLabels"))
			return err == nil && ml != nil && ml.PipeE(yaml.SetField("gate-mutant", yaml.NewStringRNode("no-pod-has-this"))) == nil
		})
	}
	return out
}

// podSpecPath is where an object holds its pod spec, nil for kinds without
// one.
func podSpecPath(n *yaml.RNode) []string {
	var p []string
	switch n.GetKind() {
	case "Pod":
		p = []string{"spec"}
	case "Deployment", "DaemonSet", "ReplicaSet", "StatefulSet", "Job", "ReplicationController", "PodTemplate":
		p = []string{"spec", "template", "spec"}
		if n.GetKind() == "PodTemplate" {
			p = []string{"template", "spec"}
		}
	case "CronJob":
		p = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	default:
		return nil
	}
	if !has(n, append(p, "containers")...) {
		return nil
	}
	return p
}

// templateLabelsPath is non-nil for a workload whose selector's matchLabels
// must match its template's labels.
func templateLabelsPath(n *yaml.RNode) []string {
	switch n.GetKind() {
	case "Deployment", "DaemonSet", "ReplicaSet", "StatefulSet":
		if has(n, "spec", "selector", "matchLabels") {
			return []string{"spec", "template", "metadata", "labels"}
		}
	}
	return nil
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

// webhookMutants are webhook configurations: valid ones (an empty caBundle,
// as charts ship them before cert-manager injects one) and ones the API
// server's validation of admissionregistration refuses.
func webhookMutants(t *testing.T) []sample {
	t.Helper()
	const valid = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: gate-agreement-webhook}
webhooks:
- name: validate.gate.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 10
  clientConfig: {service: {name: gate-webhook, namespace: default, path: /validate}, caBundle: ""}
  rules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
`
	var out []sample
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		doc := strings.Replace(valid, "ValidatingWebhookConfiguration", kind, 1)
		for _, m := range []struct{ what, old, new string }{
			{"valid, empty caBundle", "", ""},
			{"sideEffects Some", "sideEffects: None", "sideEffects: Some"},
			{"timeout above 30 s", "timeoutSeconds: 10", "timeoutSeconds: 45"},
			{"operation outside the enum", "operations: [CREATE, UPDATE]", "operations: [CREAT]"},
			{"webhook name not qualified", "name: validate.gate.example.com", "name: validate"},
			{"unknown admissionReviewVersion only", "admissionReviewVersions: [v1]", "admissionReviewVersions: [v2]"},
			{"service path not absolute", "path: /validate", "path: validate"},
		} {
			d := doc
			if m.old != "" {
				d = strings.Replace(doc, m.old, m.new, 1)
			}
			out = append(out, sample{origin: "hand-written " + kind + " " + m.what, node: yaml.MustParse(d)})
		}
	}
	return out
}
