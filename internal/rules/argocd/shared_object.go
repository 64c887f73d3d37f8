package argocd

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// SharedObject fires when two owners (Argo CD Applications, Flux
// Kustomizations or HelmReleases) render the same object for the same
// cluster.
var SharedObject = rules.Rule{
	ID: "app-shared-object", Default: finding.SeverityError, Family: "argocd",
	Doc:    "two Applications or Flux Kustomizations/HelmReleases for the same destination cluster render the same object (group, kind, namespace with the destination namespace applied, name): an error naming both owners and sources; a warning when both renders of it are identical",
	Outage: "each sync overwrites the other owner's version (Argo CD's SharedResourceWarning), so the object flips between two contents and pruning one app deletes what the other runs",
	Fix:    "give the object one owner: remove it from one of the two sources, or split it into two objects with different names or namespaces",
	Check:  checkSharedObject,
}

// owned is one object as one owner renders it.
type owned struct {
	owner, source string
	obj           *yaml.RNode
}

func checkSharedObject(c *rules.Context) []finding.Finding {
	first := map[string]owned{}
	var out []finding.Finding
	for _, as := range c.Apps {
		if as.Err != nil || as.Skipped != "" || len(as.Resources) == 0 {
			continue
		}
		cluster, ns := destination(as.App)
		o := owned{owner: ownerName(as.App), source: sourceName(as)}
		scope := argo.NewScopeOf(as.Resources) // once per render: per object it is quadratic
		for _, obj := range as.Resources {
			if manifest.IsLocalConfig(obj) || argo.IsArgoConfig(obj) {
				continue
			}
			objNS := obj.GetNamespace()
			if objNS == "" && !scope.Cluster(manifest.Kind(obj)) {
				objNS = ns
			}
			group, _, _ := strings.Cut(obj.GetApiVersion(), "/")
			if !strings.Contains(obj.GetApiVersion(), "/") {
				group = ""
			}
			key := strings.Join([]string{cluster, group, obj.GetKind(), objNS, obj.GetName()}, "\x00")
			o.obj = obj
			prev, seen := first[key]
			if !seen {
				first[key] = o
				continue
			}
			if prev.owner == o.owner {
				continue // one owner's sources: render-duplicate's domain
			}
			what := obj.GetKind() + "/" + obj.GetName()
			if objNS != "" {
				what += " (ns " + objNS + ")"
			}
			if body(prev.obj) == body(obj) {
				out = append(out, manifest.Finding("app-shared-object", finding.SeverityWarning, as.App, "", what,
					"%s is rendered identically by %s (%s) and %s (%s) for cluster %s: both apps own it, and pruning or deleting either removes what the other deploys", what, prev.owner, prev.source, o.owner, o.source, cluster))
				continue
			}
			out = append(out, manifest.Finding("app-shared-object", finding.SeverityError, as.App, "", what,
				"%s is rendered by both %s (%s) and %s (%s) for cluster %s, with different content: each sync overwrites the other (SharedResourceWarning); keep it in one of them", what, prev.owner, prev.source, o.owner, o.source, cluster))
		}
	}
	return out
}

// destination returns an owner's cluster and default namespace: an
// Application's spec.destination server or name and namespace; a Flux
// object's spec.kubeConfig secret (else the cluster it runs in) and
// targetNamespace (else its own namespace).
func destination(app *yaml.RNode) (cluster, namespace string) {
	if argo.IsApplication(app) {
		cluster = manifest.Str(app, "spec.destination.server")
		if cluster == "" {
			cluster = manifest.Str(app, "spec.destination.name")
		}
		if cluster == "https://kubernetes.default.svc" || cluster == "in-cluster" {
			cluster = "in-cluster"
		}
		return cluster, manifest.Str(app, "spec.destination.namespace")
	}
	cluster = "in-cluster"
	if s := manifest.Str(app, "spec.kubeConfig.secretRef.name"); s != "" {
		cluster = "kubeConfig " + app.GetNamespace() + "/" + s
	}
	namespace = manifest.Str(app, "spec.targetNamespace")
	if namespace == "" {
		namespace = app.GetNamespace()
	}
	return cluster, namespace
}

func ownerName(app *yaml.RNode) string {
	kind := app.GetKind()
	if !argo.IsApplication(app) {
		kind = "Flux " + kind
	}
	return kind + " " + app.GetNamespace() + "/" + app.GetName()
}

func sourceName(as argo.AppSource) string {
	if as.Index >= 0 {
		return fmt.Sprintf("spec.sources[%d] %s", as.Index, as.Path)
	}
	if argo.IsApplication(as.App) {
		return "spec.source " + as.Path
	}
	return as.Path
}

// body is the object as applied: its text without the annotations the
// render adds to say where it came from.
func body(obj *yaml.RNode) string {
	c := obj.Copy()
	for k := range c.GetAnnotations() {
		if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "kubectl-gate.dev/") {
			_ = c.PipeE(yaml.ClearAnnotation(k))
		}
	}
	return c.MustString()
}
