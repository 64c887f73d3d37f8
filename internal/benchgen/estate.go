package benchgen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// EstateRepo is the repoURL of a generated estate's Applications: check it
// with --apps-root DIR --repo-url EstateRepo.
const EstateRepo = "https://git.example.com/bench/estate.git"

// WriteEstate writes an Argo CD monorepo under root: apps/apps.yaml holds
// apps Applications, each deploying its own kustomization
// (src/app-NNNN: kustomization.yaml and render.yaml, o.Objects objects of
// Write's mix, named and namespaced for that Application alone). It is the
// estate of `check -f DIR/apps --apps-root DIR`: every source a unit.
func WriteEstate(root string, apps int, o Options) error {
	if err := os.MkdirAll(filepath.Join(root, "apps"), 0o755); err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	f, err := os.Create(filepath.Join(root, "apps", "apps.yaml"))
	if err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	w := bufio.NewWriter(f)
	for a := range apps {
		name := fmt.Sprintf("app-%04d", a)
		fmt.Fprintf(w, `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: main
    path: src/%s
  destination:
    server: https://kubernetes.default.svc
    namespace: %s
`, name, EstateRepo, name, name)
		if err := writeSource(filepath.Join(root, "src", name), name, o); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the estate: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	return nil
}

// writeSource writes one Application's kustomization.
func writeSource(dir, name string, o Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- render.yaml\n"), 0o644); err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "render.yaml"))
	if err != nil {
		return fmt.Errorf("writing the estate: %w", err)
	}
	w := bufio.NewWriter(f)
	o.Prefix, o.Namespace = name, name
	err = Write(w, o)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the estate %s: %w", dir, err)
	}
	return nil
}
