package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// pinRun is what pin makes of a run: the units, the report as JSON and as
// text, the stream it prints and the lock it writes.
type pinRun struct {
	units, reportJSON, reportText, lock string
	stdout                              []byte
	kept                                int // units whose trees were dropped before the stream was printed
}

// runPin runs inputs as pin does, holding every render until the end and
// printing each with Unit.WriteYAML into one buffer (release false, as pin
// did), or keeping each as bytes once checked and printing a
// pipeline.Stream (release true, as pin does).
func runPin(t *testing.T, in pipeline.Inputs, insecure string, release bool) pinRun {
	t.Helper()
	lock := imagelock.NewBuilder()
	o := pipeline.Options{Pin: true, ReleaseRenders: release, Lock: lock, Version: "v0.0.0-test",
		Flags: func(s *config.Spec) error {
			s.Images.InsecureRegistries = append(s.Images.InsecureRegistries, insecure)
			return nil
		}}
	res, err := pipeline.Run(context.Background(), in, o)
	if err != nil {
		t.Fatal(err)
	}
	var r pinRun
	total := res.Report()
	var units []string
	for _, u := range res.Units {
		units = append(units, u.Input()+" | "+u.Config)
		if u.Err == nil && u.Resources == nil && u.Report.Resources > 0 {
			r.kept++
		}
	}
	b, err := json.MarshalIndent(units, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	r.units = string(b)
	var text, js bytes.Buffer
	if err := report.Write(&text, total, report.Options{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&js, total, report.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	r.reportText, r.reportJSON = text.String(), js.String()
	if release {
		var s pipeline.Stream
		for _, u := range res.Units {
			if u.Err == nil {
				if err := s.Add(u); err != nil {
					t.Fatal(err)
				}
			}
		}
		var out bytes.Buffer
		if _, err := s.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		r.stdout = out.Bytes()
	} else {
		var out bytes.Buffer
		for _, u := range res.Units {
			if u.Err == nil {
				if err := u.WriteYAML(&out); err != nil {
					t.Fatal(err)
				}
			}
		}
		r.stdout = out.Bytes()
	}
	l, err := lock.Lock("run", nil, time.Unix(0, 0)).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r.lock = string(l)
	return r
}

// TestReleaseRendersPinPrintsTheSame: pin keeping each render as the bytes
// it prints once checked (Options.ReleaseRenders with Pin, Stream) prints
// byte for byte the stream, report and lock of pin holding every render
// until the end: on the estate with every cross-unit rule firing, on shop
// (an ApplicationSet, Flux, a source named again by a later level), on a
// generated estate (internal/benchgen, the bench's) and on several plain
// inputs (-k, -f, -f -R, --chart), one of them a self-managed Application,
// with images pinned against a registry.
func TestReleaseRendersPinPrintsTheSame(t *testing.T) {
	f := newReleaseFixture(t)
	reg, webDigest, image := f.reg, f.webDigest, f.image
	for _, c := range f.cases {
		t.Run(c.name, func(t *testing.T) {
			whole := runPin(t, c.in, reg.Host, false)
			kept := runPin(t, c.in, reg.Host, true)
			for _, d := range []struct{ what, whole, kept string }{
				{"units", whole.units, kept.units},
				{"report (json)", whole.reportJSON, kept.reportJSON},
				{"report (text)", whole.reportText, kept.reportText},
				{"lock", whole.lock, kept.lock},
				{"stdout", string(whole.stdout), string(kept.stdout)},
			} {
				if d.whole != d.kept {
					t.Errorf("keeping the pinned renders as bytes changes the %s:\nholding every render:\n%s\nkept:\n%s", d.what, d.whole, d.kept)
				}
			}
			if whole.kept != 0 {
				t.Errorf("the run holding every render dropped %d", whole.kept)
			}
			if kept.kept != c.kept {
				t.Errorf("want %d units' trees dropped before printing, got %d", c.kept, kept.kept)
			}
			if c.name != "shop" && !bytes.Contains(kept.stdout, []byte(reg.Host+"/")) || bytes.Contains(kept.stdout, []byte(reg.Host+"/example/web:1\n")) {
				t.Errorf("the stream holds an image of the registry unpinned, or none:\n%s", kept.stdout)
			}
			if c.name != "shop" && c.name != "generated" && !bytes.Contains(kept.stdout, []byte(image+"@"+webDigest)) {
				t.Errorf("the stream pins nothing to the registry's digest %s:\n%s", webDigest, kept.stdout)
			}
			if n := bytes.Count(kept.stdout, []byte("\n---\n")); n == 0 {
				t.Errorf("a stream of one document? %q", kept.stdout)
			}
			t.Logf("%s: %d bytes printed, %d units kept as bytes; %s", c.name, len(kept.stdout), kept.kept, lastLine(kept.reportText))
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return fmt.Sprint(lines[len(lines)-1])
}

// releaseCase is a run of the release tests, and how many units' trees
// a releasing run drops before the end: pin (kept as bytes) and check.
type releaseCase struct {
	name          string
	in            pipeline.Inputs
	kept, dropped int
}

// releaseFixture is a registry holding the images of the cases.
type releaseFixture struct {
	reg              *testutil.Registry
	webDigest, image string
	cases            []releaseCase
}

// newReleaseFixture makes the release tests' cases: the estate with every
// cross-unit rule firing, shop (an ApplicationSet, Flux, a source named
// again by a later level), a generated estate (internal/benchgen, the
// bench's) and several plain inputs (-k, -f, -f -R, --chart), one of them
// a self-managed Application, with images in a registry.
func newReleaseFixture(t *testing.T) releaseFixture {
	t.Helper()
	reg := testutil.StartRegistry(t)
	webDigest := reg.PushImage(t, "example/web:1")
	gen := t.TempDir()
	bo := benchgen.Options{Objects: 16, Images: 5, Registry: reg.Host}
	for _, repo := range bo.Repositories() {
		reg.PushImage(t, repo+":v1")
	}
	if err := benchgen.WriteEstate(gen, 24, bo); err != nil {
		t.Fatal(err)
	}
	image := reg.Host + "/example/web:1"
	plain := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"a/kustomization.yaml":    "namespace: a\nresources: [web.yaml]\ncommonAnnotations: {team: a}\n",
		"a/web.yaml":              web(image),
		"b/kustomization.yaml":    "namespace: b\nresources: [web.yaml]\n",
		"b/web.yaml":              strings.Replace(web(image), "name: web}", "name: web-b}", 1),
		"self/kustomization.yaml": "namespace: self\nresources: [app.yaml, web.yaml]\n",
		"self/app.yaml":           application("self", "self", "self"),
		"self/web.yaml":           web(image),
		"files/web.yaml":          web(image) + "---\n" + strings.Replace(web(image), "name: web}", "name: web-f, namespace: f}", 1),
	})
	chart := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"templates/web.yaml": strings.Replace(web(image), "name: web}", "name: '{{ .Release.Name }}-web', namespace: '{{ .Release.Namespace }}'}", 1),
	})
	est, shopRoot := estateWith(t, image), shop(t)
	return releaseFixture{reg: reg, webDigest: webDigest, image: image, cases: []releaseCase{
		{"estate", pipeline.Inputs{Kustomizations: []string{filepath.Join(est, "apps")}, AppsRoot: est, RepoURLs: []string{repoURL}}, 6, 6},
		{"shop", pipeline.Inputs{Kustomizations: []string{filepath.Join(shopRoot, "apps")}, AppsRoot: shopRoot, RepoURLs: []string{repoURL}}, 1, 1},
		{"generated", pipeline.Inputs{Files: []string{filepath.Join(gen, "apps")}, AppsRoot: gen, RepoURLs: []string{benchgen.EstateRepo}}, 24, 24},
		{"inputs", pipeline.Inputs{Kustomizations: []string{filepath.Join(plain, "a"), filepath.Join(plain, "self"), filepath.Join(plain, "b")}, Files: []string{filepath.Join(plain, "files")}}, 3, 3},
		{"recursive", pipeline.Inputs{Files: []string{plain}, Recursive: true}, 3, 3},
		{"chart", pipeline.Inputs{Charts: []string{chart}, Kustomizations: []string{filepath.Join(plain, "a")}}, 2, 2},
	}}
}
