package live_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/live"
)

// script is a sequence of read outcomes for Wait's loop; the reads of a
// real API server are tested in plugin/status_wait_e2e_test.go. Past its
// end the last outcome repeats.
type script []func() (*live.Result, error)

func (s *script) probe(context.Context) (*live.Result, error) {
	step := (*s)[0]
	if len(*s) > 1 {
		*s = (*s)[1:]
	}
	return step()
}

func pending(msg string) func() (*live.Result, error) {
	return func() (*live.Result, error) {
		return &live.Result{App: &live.App{}, Findings: []finding.Finding{{Rule: "live-health", Severity: finding.SeverityError, Message: msg}}}, nil
	}
}

func passing() (*live.Result, error) { return &live.Result{App: &live.App{}}, nil }

func refused() (*live.Result, error) {
	return nil, fmt.Errorf("getting Application argocd/shop: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
}

func noPending(r *live.Result) bool { return len(r.Pending(false)) == 0 }

func TestWaitConvergesAfterTransientErrors(t *testing.T) {
	s := script{pending("progressing"), refused, refused, pending("progressing"), passing}
	var nexts []time.Duration
	w, err := live.Wait(context.Background(), s.probe, noPending, live.WaitOptions{Interval: time.Millisecond, MaxInterval: 4 * time.Millisecond,
		Progress: func(a live.Attempt) { nexts = append(nexts, a.Next) }})
	if err != nil || !w.Converged || w.Reads != 5 || w.Last == nil || w.LastErr != nil {
		t.Fatalf("Wait = %+v, %v; want converged after 5 reads", w, err)
	}
	// A change of outcome (pending → error → pending) resets the pause;
	// the same outcome again grows it by half.
	want := []time.Duration{time.Millisecond, time.Millisecond, 1500 * time.Microsecond, time.Millisecond}
	if fmt.Sprint(nexts) != fmt.Sprint(want) {
		t.Errorf("pauses %v, want %v", nexts, want)
	}
}

func TestWaitBackoffIsCapped(t *testing.T) {
	s := script{pending("stuck")}
	var last time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = live.Wait(ctx, s.probe, noPending, live.WaitOptions{Interval: time.Millisecond, MaxInterval: 3 * time.Millisecond,
		Progress: func(a live.Attempt) {
			if a.N == 8 {
				last = a.Next
				cancel()
			}
		}})
	if last != 3*time.Millisecond {
		t.Errorf("pause after 8 unchanged reads = %s, want the cap 3ms", last)
	}
}

func TestWaitStopsOnPermanentError(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "applications"}, "shop")
	s := script{pending("progressing"), func() (*live.Result, error) { return nil, notFound }, passing}
	w, err := live.Wait(context.Background(), s.probe, noPending, live.WaitOptions{Interval: time.Millisecond})
	if !apierrors.IsNotFound(err) || w.Converged || w.Reads != 2 {
		t.Fatalf("Wait = %+v, %v; want the not-found error after 2 reads", w, err)
	}
}

func TestWaitDeadline(t *testing.T) {
	cause := errors.New("--timeout 50ms exceeded")
	for _, tc := range []struct {
		name      string
		s         script
		unreached bool
	}{
		{"never converges", script{pending("stuck")}, false},
		{"cluster gone at the end", script{pending("stuck"), refused}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, cause)
			defer cancel()
			began := time.Now()
			w, err := live.Wait(ctx, tc.s.probe, noPending, live.WaitOptions{Interval: 5 * time.Millisecond, MaxInterval: 5 * time.Millisecond})
			if !errors.Is(err, cause) || w.Converged || w.Last == nil {
				t.Fatalf("Wait = %+v, %v; want the deadline's cause and the last result", w, err)
			}
			if (w.LastErr != nil) != tc.unreached || (tc.unreached && (w.Failed < 2 || w.FailingSince.IsZero())) {
				t.Errorf("LastErr %v, Failed %d, FailingSince %s; want unreachable=%v", w.LastErr, w.Failed, w.FailingSince, tc.unreached)
			}
			if took := time.Since(began); took > time.Second {
				t.Errorf("took %s past a 50ms deadline", took)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "argoproj.io", Resource: "applications"}
	_, refusedErr := refused()
	cases := []struct {
		err  error
		want bool
	}{
		{refusedErr, true},
		{fmt.Errorf("listing Pod: %w", context.DeadlineExceeded), true},
		{apierrors.NewServiceUnavailable("etcd is down"), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewInternalError(errors.New("boom")), true},
		{apierrors.NewNotFound(gr, "shop"), false},
		{apierrors.NewForbidden(gr, "shop", errors.New("RBAC")), false},
		{apierrors.NewUnauthorized("token expired"), false},
		{errors.New("Application argocd/shop deploys to another cluster"), false},
		{nil, false},
	}
	for _, c := range cases {
		if got := live.Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestPending(t *testing.T) {
	app := &live.App{Revisions: []string{"1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, SyncStatus: "Synced"}
	r := &live.Result{App: app, Expect: live.Expect{Revision: "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}, Managed: 3, ExpectedObjs: 4,
		Unexpected: []live.Running{{Ref: "web:0.9"}},
		Findings: []finding.Finding{
			{Rule: "live-revision", Severity: finding.SeverityError},
			{Rule: "live-images", Severity: finding.SeverityError},
			{Rule: "live-resource-count", Severity: finding.SeverityError},
			{Rule: "live-health", Severity: finding.SeverityWarning, ResourceRef: &finding.ResourceRef{Kind: "Rollout", Name: "api"}, Field: &finding.Field{Path: "status.phase", CurrentValue: "Progressing"}},
		}}
	want := "[revision (synced 1111111, want 2222222) images (1 running, not expected; 0 expected, not running) objects (managed 3, want 4)]"
	if got := fmt.Sprint(r.Pending(false)); got != want {
		t.Errorf("Pending(false) = %s, want %s", got, want)
	}
	if got := r.Pending(true); len(got) != 4 || got[3] != "health (Rollout/api status.phase Progressing)" {
		t.Errorf("Pending(true) = %q, want the warning's health entry last", got)
	}
}
