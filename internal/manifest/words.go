package manifest

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Sample names up to three objects (Kind/name), for a finding's message.
func Sample(objs []*yaml.RNode) string {
	var names []string
	for i, o := range objs {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(objs)-3))
			break
		}
		names = append(names, Kind(o)+"/"+Name(o))
	}
	return strings.Join(names, ", ")
}

// Plural is "1 object" or "n objects".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
