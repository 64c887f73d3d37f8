package rollouts_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// rolloutsCorpus is the Argo Rollouts part of the shared corpus.
const rolloutsCorpus = "argoproj__argo-rollouts"

// corpusDirs are the corpus folders whose every file gets a golden.
var corpusDirs = []string{"examples", "pkg/kubectl-argo-rollouts/cmd/lint/testdata"}

// companionDirs are example folders whose files form one application,
// applied together (kubectl apply -f DIR): each is checked with the others.
var companionDirs = []string{"examples/ambassador", "examples/apisix", "examples/appmesh"}

// companions returns the corpus files checked together with rel, as a
// render would hold them. The top-level examples say "Prerequisites:
// kubectl apply -f analysis-templates.yaml", so their templates come along;
// the lint fixtures are self-contained, as `kubectl argo rollouts lint -f`
// reads one file.
func companions(root, rel string) []string {
	dir := path.Dir(rel)
	var out []string
	switch {
	case dir == "examples":
		out = []string{"examples/analysis-templates.yaml", "examples/cluster-analysis-templates.yaml"}
	case slices.Contains(companionDirs, dir):
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		for _, e := range entries {
			out = append(out, dir+"/"+e.Name())
		}
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == rel })
}

// corpusFiles lists every manifest file of the corpus folders, relative.
func corpusFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, d := range corpusDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			switch filepath.Ext(p) {
			case ".yaml", ".yml", ".json":
				rel, _ := filepath.Rel(root, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestRolloutsCorpus checks every Argo Rollouts example and lint fixture
// with the rollout rules and compares the findings on the file's own
// objects with a golden reviewed by hand (testdata/rollouts/corpus/README.md
// holds the decisions).
func TestRolloutsCorpus(t *testing.T) {
	root := filepath.Join(testutil.Corpus(t), rolloutsCorpus)
	files := corpusFiles(t, root)
	if len(files) < 40 {
		t.Fatalf("found %d corpus files under %v, want the examples and lint fixtures", len(files), corpusDirs)
	}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			got := corpusFindings(root, rel)
			testutil.Golden(t, "rollouts/corpus/"+rel+".golden", []byte(got))
		})
	}
}

// corpusFindings checks rel with its companions and prints the rollout
// findings about rel's own objects, one line each.
func corpusFindings(root, rel string) string {
	comp := companions(root, rel)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", rel)
	if len(comp) > 0 {
		fmt.Fprintf(&b, "# checked together with: %s\n", strings.Join(comp, " "))
	}
	paths := []string{filepath.Join(root, rel)}
	for _, c := range comp {
		paths = append(paths, filepath.Join(root, c))
	}
	res, err := render.Files(paths, nil, false, 0)
	if err != nil {
		fmt.Fprintf(&b, "no verdict: %s\n", strings.ReplaceAll(err.Error(), root+"/", ""))
		return b.String()
	}
	for _, f := range rolloutFindings(res) {
		if f.File == nil || f.File.Path != filepath.Join(root, rel) {
			continue
		}
		fmt.Fprintln(&b, formatFinding(f))
	}
	return b.String()
}
