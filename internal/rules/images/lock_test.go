package images_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	imagerules "github.com/kubectl-gate/kubectl-gate/internal/rules/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

var digestB = "sha256:" + strings.Repeat("b", 64)

// lockObject is an ImageLock as pin --write-lock writes it, as it sits in
// a render kustomize hands to its functions.
func lockObject(entries ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kubectl-gate.dev/v1alpha1\nkind: ImageLock\nmetadata:\n  name: images\n  annotations: {config.kubernetes.io/local-config: \"true\"}\nspec:\n  images:\n")
	for i := 0; i+1 < len(entries); i += 2 {
		b.WriteString("  - {image: \"" + entries[i] + "\", digest: \"" + entries[i+1] + "\", resolved: \"2026-12-03T11:00:00Z\"}\n")
	}
	return b.String()
}

func lockConfig(t *testing.T, entries ...string) *config.Spec {
	t.Helper()
	obj, err := config.Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  images:\n    lock:\n" +
		indent(lockObject(entries...), "      ")))
	if err != nil {
		t.Fatal(err)
	}
	return &obj.Spec
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func TestImageLock(t *testing.T) {
	web := "ghcr.io/shop/web:1.4.2"
	cfg := lockConfig(t, web, digestA, "nginx:1.27", digestB)
	cases := []struct {
		name   string
		stream string
		cfg    *config.Spec
		lock   int
		unused int
		says   string
	}{
		{"every image locked", deployment(web+"@"+digestA, "nginx:1.27@"+digestB), cfg, 0, 0, ""},
		{"another spelling of a locked image", deployment("ghcr.io/shop/web@"+digestA, "docker.io/library/nginx:1.27@"+digestB), cfg, 0, 0, ""},
		{"the render changed a digest", deployment(web+"@"+digestB, "nginx:1.27@"+digestB), cfg, 1, 0, "the lock pins tag 1.4.2 to " + digestA + ", the render to " + digestB},
		{"an image missing from the lock", deployment(web+"@"+digestA, "nginx:1.27@"+digestB, "ghcr.io/shop/api:2@"+digestA), cfg, 1, 0, "not in the lock: it holds no entry for ghcr.io/shop/api"},
		{"a tag not pinned", deployment(web, "nginx:1.27@"+digestB), cfg, 1, 0, "has no digest; the lock pins it to " + digestA},
		{"an entry no image uses", deployment(web + "@" + digestA), cfg, 0, 1, ""},
		{"no lock, no check", deployment(web + "@" + digestB), nil, 0, 0, ""},
		{"lock in the render", lockObject(web, digestA) + "---\n" + deployment(web+"@"+digestB), nil, 1, 0, "the lock pins tag 1.4.2"},
		{"lock in the render, passing", lockObject(web, digestA) + "---\n" + deployment(web+"@"+digestA), nil, 0, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lock := runRuleOn(t, "image-lock", c.stream, c.cfg, nil)
			unused := runRuleOn(t, "image-lock-unused", c.stream, c.cfg, nil)
			if len(lock) != c.lock || len(unused) != c.unused {
				t.Fatalf("image-lock %d, image-lock-unused %d; want %d, %d:\n%s\n%s", len(lock), len(unused), c.lock, c.unused, ruletest.FormatAll(lock), ruletest.FormatAll(unused))
			}
			if c.says != "" && !strings.Contains(lock[0].Message, c.says) {
				t.Errorf("message %q lacks %q", lock[0].Message, c.says)
			}
			for _, f := range unused {
				if f.Severity != finding.SeverityWarning {
					t.Errorf("unused entry is %s, want a warning", f.Severity)
				}
			}
		})
	}
	// The drift finding proposes the locked reference.
	got := runRuleOn(t, "image-lock", deployment(web+"@"+digestB), cfg, nil)
	if len(got) != 1 || got[0].Field.ProposedValue != web+"@"+digestA || got[0].Field.Path != "spec.template.spec.containers[0].image" {
		t.Errorf("drift finding = %+v", got)
	}
	// The unused entry of a lock in the render points at its entry.
	stream := lockObject(web, digestA, "nginx:1.27", digestB) + "---\n" + deployment(web+"@"+digestA)
	got = runRuleOn(t, "image-lock-unused", stream, nil, nil)
	if len(got) != 1 || got[0].ResourceRef.Kind != "ImageLock" || got[0].Field.Path != "spec.images[1]" || !strings.Contains(got[0].Message, "ImageLock images locks nginx:1.27") {
		t.Errorf("unused entry of an in-render lock = %+v", got)
	}
}

func TestImageLockUnreadable(t *testing.T) {
	// A lock in the render that does not parse is no verdict, not a pass.
	bad := strings.Replace(lockObject("nginx:1", digestA), "digest:", "digset:", 1) + "---\n" + deployment("nginx:1@"+digestA)
	got := runRuleOn(t, "image-lock", bad, nil, nil)
	if len(got) != 1 || !got[0].NoVerdict || !strings.Contains(got[0].Message, "digset") {
		t.Fatalf("malformed lock = %+v", got)
	}
	// Even with the rule off.
	off := config.Default()
	off.Rules["image-lock"] = "off"
	if got := runRuleOn(t, "image-lock", bad, off, nil); len(got) != 1 || !got[0].NoVerdict {
		t.Errorf("rule off dropped the no verdict: %+v", got)
	}
	// A path the shell did not read (the KRM function reads no files).
	unread := config.Default()
	unread.Images.Lock = &config.Entry{Path: "gate.lock"}
	if got := runRuleOn(t, "image-lock", deployment("nginx:1@"+digestA), unread, nil); len(got) != 1 || !got[0].NoVerdict || !strings.Contains(got[0].Message, "gate.lock was not read") {
		t.Errorf("unread lock path = %+v", got)
	}
	// Pin writes a lock; it does not hold the render to one.
	pinning := func(c *rules.Context) { c.Pinning = true }
	if got := runRuleOn(t, "image-lock", deployment("nginx:1@"+digestB), lockConfig(t, "nginx:1", digestA), pinning); len(got) != 0 {
		t.Errorf("pin held to the lock: %+v", got)
	}
}

func TestImageLockMutants(t *testing.T) {
	web := "ghcr.io/shop/web:1.4.2@" + digestA
	ruletest.Mutants(t, imagerules.Lock, ruletest.Case{Input: deployment(web), Config: lockConfig(t, "ghcr.io/shop/web:1.4.2", digestA)})
}
