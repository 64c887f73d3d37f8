package schema

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// corpusObjects reads every object of every YAML file in the corpus
// (kustomization files and documents that are not objects left out).
func corpusObjects(t testing.TB) (files []string, objs [][]*yaml.RNode) {
	t.Helper()
	// The real manifests vendored with their licenses (testdata/corpus):
	// a plain clone runs these tests; nothing is read outside the project.
	corpusDir := testutil.Corpus(t)
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		base := filepath.Base(p)
		if (ext != ".yaml" && ext != ".yml") || strings.HasPrefix(base, "kustomization") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(raw)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return nil // not YAML objects (templates, fragments)
		}
		var keep []*yaml.RNode
		for _, n := range nodes {
			if n.GetApiVersion() != "" && n.GetKind() != "" {
				keep = append(keep, n)
			}
		}
		if len(keep) > 0 {
			rel, _ := filepath.Rel(corpusDir, p)
			files = append(files, rel)
			objs = append(objs, keep)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking corpus: %v", err)
	}
	return files, objs
}

func TestCorpusReport(t *testing.T) {
	files, objs := corpusObjects(t)
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	total, bad := 0, 0
	for i, f := range files {
		rs, err := v.Validate(context.Background(), objs[i])
		if err != nil {
			t.Fatal(err)
		}
		total += len(objs[i])
		for _, r := range rs {
			bad++
			t.Logf("%s: %s", f, r)
		}
	}
	t.Logf("%d files, %d objects, %d results", len(files), total, bad)
}
