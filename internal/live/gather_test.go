package live_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-gate/kubectl-gate/internal/live"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/livetest"
)

const sha = "4f3c2a1e9b8d7c6f5a4b3c2d1e0f9a8b7c6d5e4f"

// TestLiveGatherRealAPIServer reads apps from a real kube-apiserver.
func TestLiveGatherRealAPIServer(t *testing.T) {
	c := cluster.Start(t)
	livetest.InstallCRDs(t, c)
	livetest.Install(t, c, livetest.App{Name: "shop", Revision: sha})
	livetest.Install(t, c, livetest.App{Name: "broken", Revision: sha,
		RolloutStatus:     "observedGeneration: \"1\"\nphase: Degraded\nmessage: \"RolloutAborted: metric error-rate assessed Failed\"\nabort: true\n",
		CertificateStatus: "conditions:\n- {type: Ready, status: \"False\", reason: Failed, message: \"issuer letsencrypt not found\"}\n",
	})
	r, err := live.NewKubeReader(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	began := time.Now()
	snap, err := live.Gather(ctx, r, nil, livetest.ArgoNamespace, "shop")
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	t.Logf("Gather read %d objects and %d pods in %s", len(snap.Objects), len(snap.Pods["shop"]), time.Since(began))
	for _, o := range snap.Objects {
		if o.Live == nil {
			t.Errorf("%s: %s", o.Ref, o.Missing)
		}
	}
	if n := len(snap.Pods["shop"]); n != 3 {
		t.Errorf("pods of namespace shop = %d, want 3", n)
	}
	if res := live.Judge(snap, live.Expect{Revision: sha}); len(res.Findings) != 0 {
		t.Errorf("healthy app: findings %+v, want none", res.Findings)
	}

	snap, err = live.Gather(ctx, r, nil, livetest.ArgoNamespace, "broken")
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	res := live.Judge(snap, live.Expect{Revision: sha})
	var got []string
	for _, u := range res.Unhealthy {
		got = append(got, u.Ref.Kind+" "+u.Problem.Path)
	}
	want := "Rollout status.phase,Rollout status.abort,Certificate status.conditions[Ready]"
	if strings.Join(got, ",") != want {
		t.Errorf("unhealthy = %v, want %s", got, want)
	}

	// An app deploying to another cluster needs that cluster's reader; the
	// test cluster stands in for it.
	livetest.InstallApplication(t, c, livetest.App{Name: "shop", Revision: sha, Server: "https://prod.example:6443"})
	if _, err := live.Gather(ctx, r, nil, livetest.ArgoNamespace, "shop"); err == nil || !strings.Contains(err.Error(), "deploys to another cluster (https://prod.example:6443): give --dest-context") {
		t.Errorf("remote destination without its reader: err = %v, want no verdict naming --dest-context", err)
	}
	if snap, err := live.Gather(ctx, r, r, livetest.ArgoNamespace, "shop"); err != nil || len(live.Judge(snap, live.Expect{}).Findings) != 0 {
		t.Errorf("remote destination with its reader: err = %v, want a clean read", err)
	}

	if _, err := live.Gather(ctx, r, nil, livetest.ArgoNamespace, "nope"); err == nil || !strings.Contains(err.Error(), "Application argocd/nope not found") {
		t.Errorf("missing app: err = %v, want not found", err)
	}
}

// TestLiveGatherErrors checks the answers a real server is hard to make
// give: the test API server authorizes everything (AlwaysAllow), so RBAC
// denials come from a hand-written handler speaking the API's Status shape.
func TestLiveGatherErrors(t *testing.T) {
	app := `{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"shop","namespace":"argocd"},
"status":{"resources":[{"version":"v1","kind":"Pod","namespace":"shop","name":"web-0"}]}}`
	forbidden := func(w http.ResponseWriter, what string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
"message":"%s is forbidden: User \"dev\" cannot get resource in the namespace"}`, what)
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"Application forbidden", func(w http.ResponseWriter, r *http.Request) { forbidden(w, "applications.argoproj.io \"shop\"") },
			"access denied (RBAC"},
		{"pods forbidden", func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasSuffix(r.URL.Path, "/applications/shop"):
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, app)
			case strings.HasSuffix(r.URL.Path, "/pods/web-0"):
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"shop"}}`)
			default:
				forbidden(w, "pods")
			}
		}, "access denied (RBAC: grant get/list on it): listing Pod in namespace shop"},
		{"Application not found", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`)
		}, "Application argocd/shop not found"},
		{"server hangs", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			err := gather(t, srv.URL)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if err := gather(t, "http://"+addr); err == nil || !strings.Contains(err.Error(), "the cluster is unreachable") {
			t.Errorf("err = %v, want unreachable", err)
		}
	})
}

// gather runs Gather against host with a 1 s budget and checks it ends
// within it.
func gather(t *testing.T, host string) error {
	t.Helper()
	r, err := live.NewKubeReader(&rest.Config{Host: host, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	began := time.Now()
	_, err = live.Gather(ctx, r, nil, "argocd", "shop")
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("Gather took %s, want it bounded by its 1 s budget", d)
	}
	return err
}
