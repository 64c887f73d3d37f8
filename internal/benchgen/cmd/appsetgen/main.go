// Command appsetgen writes a GitOps checkout for the ApplicationSet
// benchmark: -apps kustomize directories apps/app-NNN, each -objects
// generated objects (pinned) in namespace app-NNN; argocd/appset.yaml, one
// ApplicationSet whose git directories generator makes an Application of
// each; and written/, the same Applications written out, to compare.
//
//	go run ./internal/benchgen/cmd/appsetgen -dir /tmp/co -apps 100 -objects 10
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// Repo is the repoURL the generated Applications name; pass it to
// `kubectl gate check --repo-url`.
const Repo = "https://github.com/example/bench-gitops.git"

const appSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: bench, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git:
      repoURL: %[1]s
      revision: HEAD
      directories: [{path: "apps/*"}]
  template:
    metadata: {name: '{{.path.basename}}'}
    spec:
      project: default
      source: {repoURL: %[1]s, targetRevision: HEAD, path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
`

const application = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %[2]s, namespace: argocd}
spec:
  project: default
  source: {repoURL: %[1]s, targetRevision: HEAD, path: apps/%[2]s}
  destination: {server: https://kubernetes.default.svc, namespace: %[2]s}
`

func main() {
	dir := flag.String("dir", "", "the checkout to write")
	apps := flag.Int("apps", 100, "applications")
	objects := flag.Int("objects", 10, "objects per application")
	flag.Parse()
	if err := write(*dir, *apps, *objects); err != nil {
		fmt.Fprintln(os.Stderr, "appsetgen:", err)
		os.Exit(1)
	}
}

func write(dir string, apps, objects int) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	var render bytes.Buffer
	if err := benchgen.Write(&render, benchgen.Options{Objects: objects, Images: objects, Registry: "ghcr.io", Pinned: true}); err != nil {
		return err
	}
	files := map[string][]byte{"argocd/appset.yaml": []byte(fmt.Sprintf(appSet, Repo))}
	for i := 0; i < apps; i++ {
		name := fmt.Sprintf("app-%03d", i)
		files["apps/"+name+"/kustomization.yaml"] = []byte("namespace: " + name + "\nresources: [render.yaml]\n")
		files["apps/"+name+"/render.yaml"] = render.Bytes()
		files["written/"+name+".yaml"] = []byte(fmt.Sprintf(application, Repo, name))
	}
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
