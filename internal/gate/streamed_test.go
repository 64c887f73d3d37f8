package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	yamlstream "github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// streamed checks data as the -f shell does when it can: judged as it is
// read, then finished; whole says it had to be checked whole instead.
func streamed(t *testing.T, data []byte, path string, opts gate.Options) (rep *finding.Report, whole bool) {
	t.Helper()
	st := gate.NewStreamed(opts, gate.Deps{}, nil)
	if st == nil {
		t.Fatal("NewStreamed refused a check it can judge")
	}
	objs, err := yamlstream.ParseEach(data, path, st.Each)
	if err != nil {
		t.Fatal(err)
	}
	if st.Whole() {
		return nil, true
	}
	rep, ok := st.Finish(objs, opts)
	return rep, !ok
}

func whole(t *testing.T, data []byte, path string, opts gate.Options) *finding.Report {
	t.Helper()
	objs, err := yamlstream.Parse(data, path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := gate.Run(context.Background(), objs, opts, gate.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func reportJSON(t *testing.T, rep *finding.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// configs are the configurations the streamed check is held to Run under:
// the defaults, and one that turns on the per-object rules that are off
// or quiet by default.
func configs() []*config.Spec {
	strict := config.Default()
	strict.Images.AllowedRegistries = []string{"ghcr.io"}
	strict.Images.RequirePinnedBy = true
	return []*config.Spec{config.Default(), strict}
}

// TestStreamedAsRun: the streamed check reports what Run reports, on every
// corpus file it judges (those it leaves to Run are counted, not compared)
// and on large generated renders it cuts in many runs: unpinned images, a
// Rollout and Services it packs, identical and different copies of
// an object, objects the schema and the API server's validation refuse.
func TestStreamedAsRun(t *testing.T) {
	judged, left := 0, 0
	for _, cfg := range configs() {
		opts := gate.Options{Config: cfg}
		testutil.CorpusYAML(t, func(path string, data []byte) {
			if _, err := yamlstream.Parse(data, path); err != nil {
				return
			}
			got, wholeOnly := streamed(t, data, path, opts)
			if wholeOnly {
				left++
				return
			}
			judged++
			if w, g := reportJSON(t, whole(t, data, path, opts)), reportJSON(t, got); w != g {
				t.Errorf("%s: Run\n%s\nstreamed\n%s", path, w, g)
			}
		})
	}
	if judged < 200 || left == 0 {
		t.Errorf("%d corpus files judged streamed, %d left to Run: the test does not see both", judged, left)
	}

	var b bytes.Buffer
	if err := benchgen.Write(&b, benchgen.Options{Objects: 2000, Images: 50, Registry: "ghcr.io"}); err != nil {
		t.Fatal(err)
	}
	big := b.String()
	docs := strings.SplitAfter(big, "\n---\n")
	second := "---\n" + docs[1] // app-00001, a StatefulSet: released
	if !strings.Contains(second, "kind: StatefulSet") {
		t.Fatalf("the second generated object is no StatefulSet:\n%s", second)
	}
	second = strings.TrimSuffix(second, "---\n")
	services, rollout := testutil.RolloutTargets, testutil.RolloutNamingThem
	bad := "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad, namespace: team-00}\nspec:\n  replica: 3\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: y}}\n    spec: {containers: [{name: c, image: docker.io/nginx}]}\n"
	for _, c := range []struct {
		name, in  string
		wholeOnly bool // released copies that differ: only whole trees compare
	}{
		{"generated", big, false},
		{"identical copy", big + second, false},
		{"different copy", big + strings.Replace(second, "tier: backend", "tier: frontend", 1), true},
		{"quoted copy", big + strings.Replace(second, "name: app-00001", `name: "app-00001"`, 1), true},
		{"refused objects", bad + big + strings.ReplaceAll(bad, "name: bad", "name: bad2"), false},
		// Released before the Rollout that names them is read: packed,
		// and read back whole by the rollout rules.
		{"services and workload before their Rollout", services + big + rollout, false},
	} {
		for _, cfg := range configs() {
			opts := gate.Options{Config: cfg}
			want := whole(t, []byte(c.in), "big.yaml", opts)
			got, wholeOnly := streamed(t, []byte(c.in), "big.yaml", opts)
			if wholeOnly != c.wholeOnly {
				t.Errorf("%s: left to Run %v, want %v", c.name, wholeOnly, c.wholeOnly)
			}
			if !wholeOnly {
				if w, g := reportJSON(t, want), reportJSON(t, got); w != g {
					t.Errorf("%s: Run\n%s\nstreamed\n%s", c.name, w, g)
				}
			}
			if len(want.Findings) == 0 {
				t.Errorf("%s: no findings to compare", c.name)
			}
		}
	}
}

// TestStreamedReleases: objects no rule reads whole are released as the
// render is read, the others kept whole; NewStreamed leaves to Run what it
// cannot judge, and the streamed check finds a render that must be
// checked whole.
func TestStreamedReleases(t *testing.T) {
	var b bytes.Buffer
	if err := benchgen.Write(&b, benchgen.Options{Objects: 800, Images: 20, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	opts := gate.Options{Config: config.Default()}
	st := gate.NewStreamed(opts, gate.Deps{}, nil)
	objs, err := yamlstream.ParseEach(b.Bytes(), "big.yaml", st.Each)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, o := range objs {
		k := manifest.Kind(o)
		if full := o.Field("spec") != nil || o.Field("data") != nil; kept[k] != full && len(kept) > 0 && kept[k+"?"] {
			t.Fatalf("%s objects both kept and released", k)
		}
		kept[k], kept[k+"?"] = o.Field("spec") != nil || o.Field("data") != nil, true
	}
	for k, want := range map[string]bool{"Rollout": false, "Service": false, "Deployment": false, "StatefulSet": false, "DaemonSet": false, "CronJob": false, "Job": false, "ConfigMap": false} {
		if kept[k] != want {
			t.Errorf("%s kept whole: %v, want %v", k, kept[k], want)
		}
	}
	rep, ok := st.Finish(objs, opts)
	if !ok || rep.Resources != 800 {
		t.Fatalf("finish: ok %v, report %+v", ok, rep)
	}
	for _, f := range rep.Findings {
		if f.Severity != finding.SeverityInfo { // rollout-invalid-spec: not linked here
			t.Errorf("finding on a clean render: %+v", f)
		}
	}

	// A render the runs do not cover, once each and in order, is left to
	// Run: an object no per-object rule judged must not pass.
	st = gate.NewStreamed(opts, gate.Deps{}, nil)
	objs, err = yamlstream.ParseEach(b.Bytes(), "big.yaml", st.Each)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := yamlstream.Parse([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: unseen}\nspec: {replica: 1}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, rs := range map[string][]*yaml.RNode{"an object more": append(objs[:len(objs):len(objs)], extra...), "an object less": objs[1:]} {
		if _, ok := st.Finish(rs, opts); ok {
			t.Errorf("%s than was judged: finished streamed, want left to Run", name)
		}
	}

	for name, o := range map[string]gate.Options{
		"pin":    {Config: config.Default(), Pin: true},
		"verify": {Config: func() *config.Spec { c := config.Default(); c.Images.Digest = config.DigestVerify; return c }()},
		"lock":   {Config: func() *config.Spec { c := config.Default(); c.Images.Lock = &config.Entry{Path: "x"}; return c }()},
	} {
		if gate.NewStreamed(o, gate.Deps{}, nil) != nil {
			t.Errorf("%s: streamed, want left to Run", name)
		}
	}
	for name, extra := range map[string]string{
		"a CRD":       "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.example.com}\nspec: {group: example.com, names: {kind: X, plural: xs}, scope: Namespaced, versions: []}\n",
		"named whole": "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {}\n",
	} {
		st := gate.NewStreamed(opts, gate.Deps{}, func(r *yaml.RNode) bool { return manifest.Kind(r) == "Application" })
		if _, err := yamlstream.ParseEach([]byte(b.String()+extra), "big.yaml", st.Each); err != nil {
			t.Fatal(err)
		}
		if !st.Whole() {
			t.Errorf("%s: not left to Run", name)
		}
	}
}

// TestStreamedPackedRolloutFires: a Rollout the streamed check packed and
// released is read back whole by the rollout rules: a canary without steps
// (argo-rollouts' examples/rollout-rollingupdate.yaml, cut down) after a
// large render fires rollout-canary-pause, the same canary with a pause
// does not, and both reports are Run's.
func TestStreamedPackedRolloutFires(t *testing.T) {
	var b bytes.Buffer
	if err := benchgen.Write(&b, benchgen.Options{Objects: 1000, Images: 20, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	canary := "---\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: rollout-rollingupdate, namespace: team-00}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: rollout-rollingupdate}}\n  template:\n    metadata: {labels: {app: rollout-rollingupdate}}\n    spec:\n      containers:\n      - name: app\n        image: ghcr.io/bench/app-0001:v1@sha256:08b21ae030caba9500fb83945da362d7265e3430f2d2165d022377ecb061061f\n  strategy:\n    canary:\n      maxSurge: \"25%\"\n      maxUnavailable: 0\n"
	paused := strings.Replace(canary, "      maxSurge: \"25%\"\n", "      steps: [{setWeight: 20}, {pause: {}}]\n", 1)
	opts := gate.Options{Config: config.Default()}
	for _, c := range []struct {
		name string
		in   string
		want bool
	}{{"no steps", b.String() + canary, true}, {"a pause", b.String() + paused, false}} {
		got, wholeOnly := streamed(t, []byte(c.in), "big.yaml", opts)
		if wholeOnly {
			t.Fatalf("%s: left to Run", c.name)
		}
		fired := false
		for _, f := range got.Findings {
			fired = fired || f.Rule == "rollout-canary-pause" && f.ResourceRef != nil && f.ResourceRef.Name == "rollout-rollingupdate"
		}
		if fired != c.want {
			t.Errorf("%s: rollout-canary-pause fired %v, want %v", c.name, fired, c.want)
		}
		if w, g := reportJSON(t, whole(t, []byte(c.in), "big.yaml", opts)), reportJSON(t, got); w != g {
			t.Errorf("%s: Run\n%s\nstreamed\n%s", c.name, w, g)
		}
	}
}
