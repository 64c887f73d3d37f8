package pipeline

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/konfig"
)

// inputFile is a source's own file, where a finding with no file of its
// own is placed (every SARIF result needs a location): the kustomization
// file of a kustomization directory or an Application's source directory
// (else its Chart.yaml), a chart's Chart.yaml, the one -f file; "" when
// there is none (stdin, several files, a generated unit).
func inputFile(src Source) string {
	switch s := src.(type) {
	case *Kustomization:
		return rootFile(s.Dir)
	case *AppSource:
		return rootFile(s.Dir)
	case *Chart:
		return regular(filepath.Join(s.Dir, "Chart.yaml"))
	case *Files:
		if len(s.Paths) == 1 && s.Paths[0] != "-" {
			return regular(s.Paths[0])
		}
	}
	return ""
}

// rootFile is a directory's kustomization file, else its Chart.yaml.
func rootFile(dir string) string {
	for _, name := range append(konfig.RecognizedKustomizationFileNames(), "Chart.yaml") {
		if p := regular(filepath.Join(dir, name)); p != "" {
			return p
		}
	}
	return ""
}

func regular(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}
