package live

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxListed caps the object names a count message lists.
const maxListed = 5

// countDiff names the objects the render holds that the app does not
// manage, and the other way round, matched by group, kind and name (a
// render often leaves the namespace to the Application's destination).
func countDiff(s *Snapshot, render []*yaml.RNode) string {
	managed := map[string]bool{}
	for _, r := range s.App.Resources {
		managed[r.Group+"/"+r.Kind+"/"+r.Name] = true
	}
	rendered := map[string]bool{}
	var onlyRender []string
	for _, obj := range render {
		if isLocal(obj) {
			continue
		}
		gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
		key := gv.Group + "/" + obj.GetKind() + "/" + obj.GetName()
		rendered[key] = true
		if !managed[key] {
			onlyRender = append(onlyRender, obj.GetKind()+"/"+obj.GetName())
		}
	}
	var onlyApp []string
	for _, r := range s.App.Resources {
		if !rendered[r.Group+"/"+r.Kind+"/"+r.Name] {
			onlyApp = append(onlyApp, r.Kind+"/"+r.Name)
		}
	}
	var b strings.Builder
	if len(onlyRender) > 0 {
		fmt.Fprintf(&b, "; rendered but not managed: %s", listed(onlyRender))
	}
	if len(onlyApp) > 0 {
		fmt.Fprintf(&b, "; managed but not rendered: %s", listed(onlyApp))
	}
	return b.String()
}

func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}
