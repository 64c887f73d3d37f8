package helm

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestCommandTemplateDefaultName: `template CHART` renders as `helm
// template CHART` does, with the release named release-name (issue 22: the
// gate's helm wanted a name helm does not), and equals `template
// release-name CHART`. With the helm CLI at hand, its output is compared
// too.
func TestCommandTemplateDefaultName(t *testing.T) {
	chart := "testdata/public/helm-subchart"
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Command(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	bare, named := run("template", chart), run("template", DefaultReleaseName, chart)
	if bare != named || !strings.Contains(bare, "release-name") {
		t.Errorf("template CHART differs from template release-name CHART, or names no release-name:\n%s", bare)
	}
	// helm's template command keeps release-name with --generate-name too.
	if gen := run("template", chart, "--generate-name"); gen != bare {
		t.Errorf("--generate-name: not the default name, as helm template keeps it")
	}
	helmBin := testutil.Tool(t, "HELM", "helm")
	home := t.TempDir()
	env := []string{"HELM_CONFIG_HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_DATA_HOME=" + home,
		"KUBECONFIG=" + filepath.Join(home, "none"), "HELM_NAMESPACE="}
	r := testutil.Run(t, ".", "", env, helmBin, "template", chart)
	if r.Code != 0 {
		t.Fatalf("helm template %s: exit %d\n%s", chart, r.Code, r.Stderr)
	}
	compare(t, index(t, r.Stdout), index(t, bare))
}
