package rollouts

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// API groups of the objects the rollout rules read.
const (
	groupRollouts = "argoproj.io"
	groupApps     = "apps"
	groupCore     = ""
)

// podTemplateHashLabel is the label the Rollouts controller adds to the
// pods and to the selectors of the Services it manages.
const podTemplateHashLabel = "rollouts-pod-template-hash"

// scalar is any YAML scalar read as its text, so that `setWeight: "10"` or
// `autoPromotionEnabled: "false"` decode instead of failing the rule.
type scalar string

// UnmarshalYAML accepts any scalar node.
func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single value, got a list or map", n.Line)
	}
	*s = scalar(n.Value)
	return nil
}

// objectRef is a Rollout's workloadRef.
type objectRef struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Name       string `yaml:"name"`
}

// apiGroup returns the group of an apiVersion: "apps/v1" → "apps", "v1" → "".
func apiGroup(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return groupCore
}

// isKind reports whether an object has the given API group and kind.
func isKind(obj *yaml.RNode, group, kind string) bool {
	return manifest.Kind(obj) == kind && apiGroup(manifest.APIVersion(obj)) == group
}

// rollouts returns the Argo Rollouts of the render that are applied, whole
// (those the streamed check packed are unpacked: Context.Whole), found
// once per render for the eleven rules that read them (shared: the
// callers only read the slice).
func rollouts(c *rules.Context) []*yaml.RNode {
	return rules.Memo(c, "rollouts/applied", func() []*yaml.RNode {
		var out []*yaml.RNode
		for _, obj := range c.Index().Kind("Rollout") {
			if isKind(obj, groupRollouts, "Rollout") && !manifest.IsLocalConfig(obj) {
				out = append(out, c.Whole(obj))
			}
		}
		return out
	})
}

// lookup finds an object of a group and kind by namespace and name. Same
// namespace means the same string: a Rollout without a namespace finds
// objects without one, as they land in the same namespace on apply.
// ClusterAnalysisTemplates are cluster-scoped: pass namespace "" and any
// namespace matches.
func lookup(c *rules.Context, group, kind, namespace, name string) *yaml.RNode {
	byName := rules.Memo(c, "lookup/"+group+"/"+kind, func() map[[2]string]*yaml.RNode {
		m := map[[2]string]*yaml.RNode{}
		for _, obj := range c.Index().Kind(kind) {
			if !isKind(obj, group, kind) || manifest.IsLocalConfig(obj) {
				continue
			}
			k := [2]string{manifest.Namespace(obj), manifest.Name(obj)}
			if kind == "ClusterAnalysisTemplate" {
				k[0] = "" // cluster-scoped: any namespace matches
			}
			if _, dup := m[k]; !dup {
				m[k] = obj
			}
		}
		return m
	})
	if kind == "ClusterAnalysisTemplate" {
		namespace = ""
	}
	return c.Whole(byName[[2]string{namespace, name}])
}

// decodeAt decodes the node at a dotted path into out. found is false when
// the path is absent; an error means the node is there but malformed.
func decodeAt(obj *yaml.RNode, path string, out any) (found bool, err error) {
	n := yamlpath.Dotted(obj.YNode(), path)
	if n == nil || n.Tag == yaml.NodeTagNull {
		return false, nil
	}
	if err := n.Decode(out); err != nil {
		return true, fmt.Errorf("reading %s: %w", path, err)
	}
	return true, nil
}

// unreadable is the finding for a Rollout field a rule cannot read: the
// gate fails closed instead of skipping it.
func unreadable(rule string, obj *yaml.RNode, path string, err error) finding.Finding {
	return manifest.Finding(rule, finding.SeverityError, obj, path, nil, "cannot check: %v", err)
}

// workloadKinds are the kinds a workloadRef may name, with the path of their
// pod template (rollout/templateref.go in argo-rollouts v1.10).
var workloadKinds = map[[2]string]string{
	{groupApps, "Deployment"}:  "spec.template",
	{groupApps, "ReplicaSet"}:  "spec.template",
	{groupCore, "PodTemplate"}: "template",
}

// podLabels returns the labels of a Rollout's pod template: its own, or
// those of the workload its workloadRef names; from names where they came
// from. ok is false when there is no template to read (the workloadRef
// target is missing or unsupported: rollout-workload-ref reports that).
func podLabels(c *rules.Context, ro *yaml.RNode) (labels map[string]string, from string, ok bool) {
	var ref objectRef
	hasRef, err := decodeAt(ro, "spec.workloadRef", &ref)
	if err != nil {
		return nil, "", false
	}
	src, path, from := ro, "spec.template", "the pod template of Rollout/"+manifest.Name(ro)
	if hasRef {
		group := apiGroup(ref.APIVersion)
		tpl, known := workloadKinds[[2]string{group, ref.Kind}]
		target := lookup(c, group, ref.Kind, manifest.Namespace(ro), ref.Name)
		if !known || target == nil {
			return nil, "", false
		}
		src, path = target, tpl
		from = fmt.Sprintf("the pod template of Rollout/%s (from %s/%s)", manifest.Name(ro), ref.Kind, ref.Name)
	}
	labels = map[string]string{}
	if _, err := decodeAt(src, path+".metadata.labels", &labels); err != nil {
		return nil, "", false
	}
	return labels, from, true
}

// reads are the kinds the rollout rules read beyond what names an object
// (Rule.Reads): the Experiments that run analyses.
var reads = []string{"Experiment"}

// follows are the kinds the rollout rules read through Context.Whole, so
// that the streamed check packs them rather than keeping them whole: the
// Rollouts (rollouts), and where a Rollout or an Experiment names an
// object (lookup) Services, workloads, analysis templates, traffic
// routers. A Rollout held whole is ~20 KB of YAML nodes, packed ~2 KB: on
// the 9,020-object bench render, 1,127 of them were a third of what the
// check keeps as it reads.
var follows = []string{
	"Rollout",
	"AnalysisTemplate", "ClusterAnalysisTemplate",
	"Deployment", "ReplicaSet", "PodTemplate",
	kindIngress.kind, kindService.kind, kindVirtualService.kind, kindDestRule.kind,
	kindTraefik.kind, kindApisix.kind, kindMapping.kind, kindHTTPRoute.kind,
}
