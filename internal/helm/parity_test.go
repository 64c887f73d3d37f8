package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// parityCase is one chart rendered by the gate and by the helm CLI with
// the same flags.
type parityCase struct {
	name, dir string
	o         Options
}

func parityCases(t *testing.T) []parityCase {
	// `helm create`'s starter chart, written by the SDK the CLI uses: the
	// shape most application charts start from.
	starter, err := chartutil.Create("starter", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return []parityCase{
		{"bluegreen defaults", blueGreen, Options{}},
		{"bluegreen prod", blueGreen, Options{ReleaseName: "shop", Namespace: "prod", IncludeCRDs: true,
			Set: []string{"bluegreen.autoPromotion=true", "metrics.enabled=false"}, SetString: []string{"image.tag=2.0"},
			KubeVersion: "v1.31.2", APIVersions: []string{"gateway.networking.k8s.io/v1"}, SkipTests: true}},
		{"bluegreen no hooks", blueGreen, Options{NoHooks: true, SetJSON: []string{`image={"repository":"r","tag":"t"}`}}},
		{"cert-manager", "testdata/public/cert-manager", Options{ReleaseName: "cert-manager", Namespace: "cert-manager"}},
		{"cert-manager crds", "testdata/public/cert-manager", Options{ReleaseName: "cm", Namespace: "security",
			Set: []string{"crds.enabled=true", "prometheus.servicemonitor.enabled=true", "webhook.replicaCount=3"}, KubeVersion: "1.30.0"}},
		{"helm subchart", "testdata/public/helm-subchart", Options{ReleaseName: "sub", IncludeCRDs: true,
			ValueFiles: []string{"testdata/public/helm-subchart/extra_values.yaml"}}},
		{"helm subchart tags", "testdata/public/helm-subchart", Options{Set: []string{"tags.front-end=false", "subchartA.enabled=true"}}},
		{"starter", starter, Options{ReleaseName: "web", Namespace: "apps", Set: []string{"ingress.enabled=true", "autoscaling.enabled=true"}}},
	}
}

// TestParityWithHelmCLI renders charts with the gate and with `helm
// template` v4.3.2 (HELM, else helm on PATH; `make tools` installs it) and
// compares every object's identity, content and template source.
func TestParityWithHelmCLI(t *testing.T) {
	helmBin := testutil.Tool(t, "HELM", "helm")
	// `go install` builds carry no release ldflags: helm then says "v4.3";
	// the module version is in the build info.
	if v := testutil.Run(t, ".", "", nil, "go", "version", "-m", helmBin); !strings.Contains(v.Stdout, "helm.sh/helm/v4\t"+Version) {
		t.Fatalf("%s is not helm %s:\n%s", helmBin, Version, v.Stdout)
	}
	home := t.TempDir()
	env := []string{"HELM_CONFIG_HOME=" + home, "HELM_CACHE_HOME=" + home, "HELM_DATA_HOME=" + home,
		"KUBECONFIG=" + filepath.Join(home, "none"), "HELM_NAMESPACE="}
	for _, c := range parityCases(t) {
		t.Run(c.name, func(t *testing.T) {
			r := testutil.Run(t, ".", "", env, helmBin, helmArgs(c)...)
			if r.Code != 0 {
				t.Fatalf("helm %v: exit %d\n%s", helmArgs(c), r.Code, r.Stderr)
			}
			docs, err := Template(context.Background(), c.dir, c.o)
			if err != nil {
				t.Fatal(err)
			}
			var ours bytes.Buffer
			if err := Print(&ours, docs); err != nil {
				t.Fatal(err)
			}
			want, got := index(t, r.Stdout), index(t, ours.String())
			if len(want) == 0 {
				t.Fatal("helm rendered nothing")
			}
			compare(t, want, got)
			// The parsed objects name the same templates.
			nodes, err := Parse(docs, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range nodes {
				k := n.GetApiVersion() + " " + n.GetKind() + " " + n.GetNamespace() + "/" + n.GetName()
				if w, ok := want[k]; ok && yamlpath.Annotation(n.YNode(), AnnoSource) != SourcePath("", w.source) {
					t.Errorf("%s: source %q, helm says %q", k, yamlpath.Annotation(n.YNode(), AnnoSource), w.source)
				}
			}
			t.Logf("%d objects identical", len(want))
		})
	}
}

func helmArgs(c parityCase) []string {
	o := c.o
	name := o.ReleaseName
	if name == "" {
		name = DefaultReleaseName
	}
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	args := []string{"template", name, c.dir, "--namespace", ns}
	for _, f := range o.ValueFiles {
		args = append(args, "--values", f)
	}
	for flag, vals := range map[string][]string{"--set": o.Set, "--set-string": o.SetString, "--set-json": o.SetJSON, "--api-versions": o.APIVersions} {
		for _, v := range vals {
			args = append(args, flag, v)
		}
	}
	if o.KubeVersion != "" {
		args = append(args, "--kube-version", o.KubeVersion)
	}
	for flag, on := range map[string]bool{"--include-crds": o.IncludeCRDs, "--skip-tests": o.SkipTests, "--no-hooks": o.NoHooks} {
		if on {
			args = append(args, flag)
		}
	}
	return args
}

type rendered struct {
	source, json string
}

// index parses a `helm template` stream with kyaml's reader (not the
// gate's splitter) and keys each object by apiVersion, kind, namespace and
// name, keeping its content as canonical JSON and its Source comment.
func index(t *testing.T, text string) map[string]rendered {
	t.Helper()
	out := map[string]rendered{}
	for _, d := range SplitManifest(text) {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(d.Body), OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatalf("parsing %s: %v", d.Source, err)
		}
		for _, n := range nodes {
			m, err := n.Map()
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			k := n.GetApiVersion() + " " + n.GetKind() + " " + n.GetNamespace() + "/" + n.GetName()
			if _, dup := out[k]; dup {
				t.Fatalf("%s rendered twice", k)
			}
			out[k] = rendered{source: d.Source, json: string(b)}
		}
	}
	return out
}

func compare(t *testing.T, want, got map[string]rendered) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the gate renders %s, helm does not", k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("helm renders %s, the gate does not", k)
		case g.json != want[k].json:
			t.Errorf("%s differs:\n helm: %s\n gate: %s", k, want[k].json, g.json)
		case g.source != want[k].source:
			t.Errorf("%s: Source %q, helm says %q", k, g.source, want[k].source)
		}
	}
}
