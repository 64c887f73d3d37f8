package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
)

// serverWarnings collects the warnings the API server returns, per request
// (the test issues requests one at a time).
type serverWarnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *serverWarnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *serverWarnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.texts
	w.texts = nil
	return out
}

// TestMatrixAPIServer creates every case's policies, bindings and params in
// a real kube-apiserver (v1.37.2), creates each object with a server-side
// dry run, and requires the API server's verdict — denial message and
// reason, warnings — to equal the gate's for every object. Audit results
// and errors swallowed by failurePolicy Ignore are invisible to a client:
// there the API server must admit without a warning, as the gate's verdict
// (info, warning) lets the deploy through.
func TestMatrixAPIServer(t *testing.T) {
	c := cluster.Start(t)
	for i, mc := range matrixCases {
		ns := matrixNS(i)
		c.Apply(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
		c.Apply(t, subst(mc.setup, ns))
	}
	warnings := &serverWarnings{}
	cfg := rest.CopyConfig(c.RESTConfig())
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitPoliciesActive(t, c, dyn)

	k := newKinds(nil)
	compared, denied, warned, noVerdict := 0, 0, 0, 0
	for i, mc := range matrixCases {
		want, _ := gateVerdicts(t, i, mc)
		for j, o := range mc.objects {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(mustJSON(t, subst(o.yaml, matrixNS(i)))); err != nil {
				t.Fatal(err)
			}
			gvr, _, _ := k.mapping(obj.GroupVersionKind())
			warnings.take()
			_, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(context.Background(), obj,
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			got := verdict{warnings: policyWarnings(warnings.take())}
			var st *apierrors.StatusError
			switch {
			case errors.As(err, &st):
				got.deny, got.status, got.reason = true, st.ErrStatus.Message, string(st.ErrStatus.Reason)
			case err != nil:
				t.Fatalf("%s/%d: dry-run create: %v", mc.name, j, err)
			}
			name := fmt.Sprintf("%s/%d (%s %s)", mc.name, j, obj.GetKind(), obj.GetName())
			if len(want[j].noVerdict) > 0 || mc.server[j] != "" {
				// The deliberate difference: the gate has no verdict (an
				// authorizer check), the API server has one.
				checkServerOnly(t, name, mc.server[j], got, want[j])
				noVerdict++
				continue
			}
			compareVerdicts(t, name, got, want[j])
			compared++
			if got.deny {
				denied++
			}
			warned += len(got.warnings)
		}
	}
	t.Logf("%d objects of %d cases compared with kube-apiserver: %d denied, %d policy warnings; %d objects where the gate deliberately has no verdict (authorizer)",
		compared, len(matrixCases), denied, warned, noVerdict)
	if denied == 0 || warned == 0 {
		t.Errorf("the API server denied %d and warned %d times: the policies were not active", denied, warned)
	}
}

func compareVerdicts(t *testing.T, name string, server, gate verdict) {
	t.Helper()
	if server.deny != gate.deny || server.status != gate.status || server.reason != gate.reason {
		t.Errorf("%s: API server: deny=%v %q (%s); gate: deny=%v %q (%s)", name,
			server.deny, server.status, server.reason, gate.deny, gate.status, gate.reason)
	}
	if !slices.Equal(sorted(server.warnings), sorted(gate.warnings)) {
		t.Errorf("%s: API server warnings %q, gate warnings %q", name, server.warnings, gate.warnings)
	}
	if len(gate.noVerdict) > 0 {
		t.Errorf("%s: gate has no verdict: %q", name, gate.noVerdict)
	}
}

// checkServerOnly handles an object the gate deliberately has no verdict
// on: the gate must say so, and the API server's verdict must be the one
// the case records for the test cluster's authorizer.
func checkServerOnly(t *testing.T, name, serverWant string, server, gate verdict) {
	t.Helper()
	if len(gate.noVerdict) == 0 || serverWant == "" {
		t.Errorf("%s: a row without a gate verdict needs both the gate's no-verdict and the API server's verdict (gate %q, server want %q)",
			name, gate.noVerdict, serverWant)
		return
	}
	wantDeny, lists := wantOf(t, name, serverWant)
	if len(lists) > 0 {
		t.Fatalf("%s: the API server's verdict is admit or deny, not %q", name, serverWant)
	}
	if (wantDeny != "") != server.deny || !strings.Contains(server.status, wantDeny) {
		t.Errorf("%s: API server: deny=%v %q, want %q", name, server.deny, server.status, serverWant)
	}
	if len(server.warnings) > 0 {
		t.Errorf("%s: API server warnings %q", name, server.warnings)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// policyWarnings keeps the ValidatingAdmissionPolicy warnings (the API
// server may add others, such as deprecations).
func policyWarnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		if strings.HasPrefix(w, "Validation failed for ValidatingAdmissionPolicy") {
			out = append(out, w)
		}
	}
	return out
}

// waitPoliciesActive creates a probe policy last and waits until the API
// server enforces it: the policy informer delivers in order, so every
// policy created before it is active too.
func waitPoliciesActive(t *testing.T, c *cluster.Cluster, dyn dynamic.Interface) {
	t.Helper()
	c.Apply(t, `
apiVersion: v1
kind: Namespace
metadata: {name: probe}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: zz-probe}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "false", message: probe}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: zz-probe}
spec:
  policyName: zz-probe
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: probe}}
`)
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "probe", "namespace": "probe"}}}
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := dyn.Resource(configMapsGVR).Namespace("probe").Create(context.Background(), probe,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "zz-probe") {
			// A little longer for the bindings' param informers.
			time.Sleep(2 * time.Second)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe policy is not enforced after 90 s (last: %v)", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
