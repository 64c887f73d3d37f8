package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// kustomize's log lines (here: an unused var, logged by every render) are
// shown once, as warning: lines, not raw and timestamped per render.
func TestKustomizeLogLinesAreWarnings(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\nvars:\n- name: UNUSED\n  objref: {apiVersion: v1, kind: ConfigMap, name: a}\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	})
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"check", "-k", dir, "-k", dir + "/"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, "test")
	if code != ExitPass {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	want := "warning: well-defined vars that were never replaced: UNUSED\n"
	if strings.Count(errb.String(), "never replaced") != 1 || !strings.Contains(errb.String(), want) {
		t.Errorf("stderr = %q, want %q once", errb.String(), want)
	}
	// kustomize writes its deprecation notice to os.Stderr itself, once per
	// render: collected too, shown once, without its "# ".
	if n := strings.Count(errb.String(), "warning: 'vars' is deprecated"); n != 1 || strings.Contains(errb.String(), "# Warning") {
		t.Errorf("stderr = %q, want the deprecation notice once as a warning: line", errb.String())
	}
	// --quiet shows no warnings: kustomize's are not shown either (they
	// were, as the only lines on stderr)
	out.Reset()
	errb.Reset()
	if code := Run(context.Background(), []string{"check", "-q", "-k", dir}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, "test"); code != ExitPass {
		t.Fatalf("-q: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if errb.Len() > 0 {
		t.Errorf("-q: stderr = %q, want nothing", errb.String())
	}
}
