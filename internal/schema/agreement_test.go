package schema

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	// The binaries validate webhook configurations (their mains import it).
	_ "github.com/kubectl-gate/kubectl-gate/internal/apivalidation/webhooks"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// sample is one object of the agreement set.
type sample struct {
	origin string // corpus file, or "mutant:<kind of mutation> of <file>"
	node   *yaml.RNode
	// expectDisagree names the known gap when the gate cannot agree by
	// construction (see the package doc); empty means it must agree.
	expectDisagree string
	// class is the hand-written validation class of a mutant
	// (handWrittenClasses); the set takes a few of each per kind.
	class string
}

// perClassAndKind is how many mutants of one hand-written class the set
// takes per kind: enough to meet each kind's validation, few enough that
// the API server judges the set in minutes.
const perClassAndKind = 4

type verdict struct {
	reject bool
	why    string
}

// TestAgreementWithAPIServer checks every object of the shared corpus plus
// generated mutants against a real kube-apiserver with
// `kubectl apply --dry-run=server --validate=strict`, object by object, and
// compares the verdicts with the gate's. It fails on any disagreement that
// is not a documented gap, and logs the table (GATE_AGREEMENT_OUT=FILE also
// writes it as Markdown). GATE_AGREEMENT_DIR=DIR also writes the set itself
// for the peers' side by side (`make schema-agreement`, see writeSet).
func TestAgreementWithAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real API server; -short")
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	files, objs := corpusObjects(t)
	c := cluster.Start(t)

	widget, err := os.ReadFile(filepath.Join("testdata", "agreement", "widget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	installCRDs(t, kubectl, c.Kubeconfig, string(widget))

	var set []sample
	for i, f := range files {
		for _, n := range objs[i] {
			if n.GetName() == "" {
				continue // generateName: kubectl apply refuses those before any validation
			}
			if n.GetKind() == "CustomResourceDefinition" {
				continue // the same CRDs are installed from the embedded set: applying the corpus copy is an update, not a create
			}
			set = append(set, sample{origin: f, node: n})
		}
	}
	createNamespaces(t, c, set)

	crds, err := LoadCRDFiles([]string{filepath.Join("testdata", "agreement", "widget.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(Options{CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	base := judgeAll(t, kubectl, c.Kubeconfig, set)
	var mutants []sample
	taken := map[string]int{}
	for i, s := range set {
		if base[i].reject {
			continue
		}
		for _, m := range mutate(s) {
			if m.class != "" {
				key := m.class + "\x00" + m.node.GetKind()
				if taken[key] >= perClassAndKind {
					continue
				}
				taken[key]++
			}
			mutants = append(mutants, m)
		}
	}
	mutants = append(mutants, handWritten(t)...)
	mutants = append(mutants, webhookMutants(t)...)
	createNamespaces(t, c, mutants)
	mv := judgeAll(t, kubectl, c.Kubeconfig, mutants)
	all := append(set, mutants...)
	server := append(base, mv...)

	var rows []string
	agree, unexpected := 0, 0
	gate := make([]verdict, len(all))
	for i, s := range all {
		g := gateVerdict(t, v, s.node)
		gate[i] = g
		if g.reject == server[i].reject {
			agree++
			continue
		}
		if s.expectDisagree == "" {
			unexpected++
		}
		rows = append(rows, fmt.Sprintf("| %s | %s %s/%s | %s | %s | %s |", s.origin, s.node.GetApiVersion(), s.node.GetKind(), s.node.GetName(),
			verdictText(g), verdictText(server[i]), s.expectDisagree))
	}
	sort.Strings(rows)
	table := fmt.Sprintf("objects: %d (corpus %d, mutants %d); agree: %d; disagree: %d (%d unexplained)\n\n| origin | object | gate | API server | known gap |\n|---|---|---|---|---|\n%s\n",
		len(all), len(set), len(mutants), agree, len(all)-agree, unexpected, strings.Join(rows, "\n"))
	t.Log("\n" + table)
	if out := os.Getenv("GATE_AGREEMENT_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if dir := os.Getenv("GATE_AGREEMENT_DIR"); dir != "" {
		writeSet(t, dir, all, server, gate, crdDocs(t, string(widget)))
		empty := filepath.Join(t.TempDir(), "empty.yaml")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		msg, err := exec.Command(kubectl, "--kubeconfig", c.Kubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f", empty).CombinedOutput()
		rc := 0
		if err != nil {
			rc = -1 // did not run
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				rc = exit.ExitCode()
			}
		}
		line := fmt.Sprintf("exit %d  %s\n", rc, strings.Join(strings.Fields(string(msg)), " "))
		if err := os.WriteFile(filepath.Join(dir, "empty-input.txt"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(all) < 500 {
		t.Errorf("agreement set has %d objects, want at least 500", len(all))
	}
	if unexpected > 0 {
		t.Errorf("%d unexplained disagreements with the API server", unexpected)
	}
}

func verdictText(v verdict) string {
	if !v.reject {
		return "accept"
	}
	why := strings.ReplaceAll(strings.TrimSpace(v.why), "\n", " ")
	why = strings.ReplaceAll(why, "|", "\\|")
	if len(why) > 160 {
		why = why[:160] + "…"
	}
	return "reject: " + why
}

func gateVerdict(t *testing.T, v *Validator, n *yaml.RNode) verdict {
	rs, err := v.Validate(context.Background(), []*yaml.RNode{n})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Rule != RuleAPIDeprecated {
			return verdict{reject: true, why: r.Rule + " " + r.Field + ": " + r.Reason}
		}
	}
	return verdict{}
}

// judgeAll runs kubectl apply --dry-run=server --validate=strict on each
// object alone, a few at a time.
func judgeAll(t *testing.T, kubectl, kubeconfig string, set []sample) []verdict {
	dir := t.TempDir()
	out := make([]verdict, len(set))
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				file := filepath.Join(dir, fmt.Sprintf("obj-%d.yaml", i))
				if err := os.WriteFile(file, []byte(set[i].node.MustString()), 0o644); err != nil {
					out[i] = verdict{reject: true, why: err.Error()}
					continue
				}
				cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f", file)
				msg, err := cmd.CombinedOutput()
				out[i] = verdict{reject: err != nil, why: string(msg)}
			}
		}()
	}
	for i := range set {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// installCRDs creates the embedded CRDs and extra in the cluster, so custom
// resources meet the same schemas on both sides. kubectl applies them and
// waits for Established with a deadline long enough for Argo CD's 1.5 MB
// ApplicationSet schema on a loaded machine.
func installCRDs(t *testing.T, kubectl, kubeconfig, extra string) {
	t.Helper()
	dir := t.TempDir()
	docs := crdDocs(t, extra)
	for i, d := range docs {
		file := filepath.Join(dir, fmt.Sprintf("crd-%d.yaml", i))
		if err := os.WriteFile(file, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("apply", "--server-side", "-f", dir)
	run("wait", "--for=condition=Established", "--timeout=600s", "crd", "--all")
}

// crdDocs is extra followed by every embedded CRD, one document each (the
// embedded ones as JSON).
func crdDocs(t *testing.T, extra string) []string {
	t.Helper()
	docs := []string{extra}
	for _, file := range builtinCRDFiles() {
		raw, err := readZstd(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if _, crdJSON, ok := strings.Cut(line, "\t"); ok {
				docs = append(docs, crdJSON)
			}
		}
	}
	return docs
}

// writeSet writes the agreement set for .ci/schema-agreement.sh, which runs
// kubeconform and kubectl-validate on exactly these objects:
//
//	DIR/objects/NNNN.yaml  one object per file, as sent to the API server
//	DIR/crds/NNN.yaml      the CRDs the cluster had (the test Widget, the embedded sets)
//	DIR/verdicts.tsv       index, file, origin, object, API server verdict,
//	                       gate verdict (accept|reject), the server's message
//
// DIR is emptied first: a stale object must not join the next run.
func writeSet(t *testing.T, dir string, set []sample, server, gate []verdict, crds []string) {
	t.Helper()
	for _, sub := range []string{"objects", "crds"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			t.Fatalf("emptying %s: %v", dir, err)
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatalf("creating %s: %v", dir, err)
		}
	}
	word := func(v verdict) string {
		if v.reject {
			return "reject"
		}
		return "accept"
	}
	clean := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return s
	}
	var tsv strings.Builder
	tsv.WriteString("index\tfile\torigin\tobject\tserver\tgate\tserver_message\n")
	for i, s := range set {
		file := fmt.Sprintf("objects/%04d.yaml", i)
		if err := os.WriteFile(filepath.Join(dir, file), []byte(s.node.MustString()), 0o644); err != nil {
			t.Fatalf("writing agreement set: %v", err)
		}
		obj := fmt.Sprintf("%s %s/%s", s.node.GetApiVersion(), s.node.GetKind(), s.node.GetName())
		msg := ""
		if server[i].reject {
			msg = clean(server[i].why)
		}
		fmt.Fprintf(&tsv, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i, file, clean(s.origin), obj, word(server[i]), word(gate[i]), msg)
	}
	for i, d := range crds {
		if err := os.WriteFile(filepath.Join(dir, "crds", fmt.Sprintf("%03d.yaml", i)), []byte(d), 0o644); err != nil {
			t.Fatalf("writing agreement CRDs: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "verdicts.tsv"), []byte(tsv.String()), 0o644); err != nil {
		t.Fatalf("writing agreement verdicts: %v", err)
	}
	t.Logf("agreement set: %d objects, %d CRDs written to %s", len(set), len(crds), dir)
}

// createNamespaces creates every namespace the set uses, each with the
// default ServiceAccount (no controller-manager runs to make it, and Pod
// admission looks it up).
func createNamespaces(t *testing.T, c *cluster.Cluster, set []sample) {
	t.Helper()
	seen := map[string]bool{"default": true, "kube-system": true, "kube-public": true}
	var docs []string
	docs = append(docs, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: default}\n")
	for _, s := range set {
		ns := s.node.GetNamespace()
		if ns == "" || seen[ns] || len(validation.IsDNS1123Label(ns)) > 0 {
			continue
		}
		seen[ns] = true
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: %s}\n", ns, ns))
	}
	if len(docs) > 0 {
		c.Apply(t, strings.Join(docs, "\n---\n"))
	}
}
