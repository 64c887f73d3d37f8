package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Snapshot is what `status` read from the cluster; Judge turns it into
// findings without touching the cluster again.
type Snapshot struct {
	App       *App
	AppObject *unstructured.Unstructured
	// Objects are the managed objects of status.resources, in that order.
	Objects []Object
	// Pods holds every pod of each namespace a workload of the app lives in.
	Pods map[string][]unstructured.Unstructured
}

// Object is one managed object: the live object, or why there is none.
type Object struct {
	Ref  ManagedRef
	Live *unstructured.Unstructured
	// Missing says why Live is nil: not found, or a kind the server does
	// not serve.
	Missing string
}

// concurrency bounds parallel reads against the API server.
const concurrency = 8

// Gather reads the Application namespace/name from Argo CD's cluster
// (argo), then from the cluster it deploys to (dest) the objects it manages
// and the pods of its workloads. dest nil means Argo CD's own cluster, and
// an Application that deploys elsewhere is then no verdict: reading its
// objects from the wrong cluster would report them all missing. Pods are
// listed once per namespace, not once per workload. Any error means no
// verdict and names what failed; a managed object that does not exist is not
// an error (Judge reports it).
func Gather(ctx context.Context, argo, dest Reader, namespace, name string) (*Snapshot, error) {
	obj, err := argo.Get(ctx, ApplicationGVK, namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Application %s/%s not found (is Argo CD in namespace %q? -n names it): %w", namespace, name, namespace, err)
		}
		return nil, explain(err)
	}
	app := ParseApp(obj)
	if dest == nil {
		if !app.InCluster() {
			return nil, fmt.Errorf("Application %s/%s deploys to another cluster (%s): give --dest-context, the kubeconfig context that reaches it", namespace, name, app.Destination)
		}
		dest = argo
	}
	s := &Snapshot{App: app, AppObject: obj, Pods: map[string][]unstructured.Unstructured{}}
	s.Objects = make([]Object, len(s.App.Resources))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, ref := range s.App.Resources {
		g.Go(func() error {
			o, err := readObject(gctx, dest, ref)
			s.Objects[i] = o
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, explain(err)
	}
	if err := s.listPods(ctx, dest); err != nil {
		return nil, explain(err)
	}
	return s, nil
}

// readObject reads one managed object; not found and not served are
// answers, anything else an error.
func readObject(ctx context.Context, r Reader, ref ManagedRef) (Object, error) {
	o := Object{Ref: ref}
	live, err := r.Get(ctx, ref.GVK(), ref.Namespace, ref.Name)
	switch {
	case err == nil:
		o.Live = live
	case apierrors.IsNotFound(err):
		o.Missing = "not found in the cluster"
	case meta.IsNoMatchError(err):
		o.Missing = "its kind " + ref.GVK().String() + " is not served by the API server"
	default:
		return o, err
	}
	return o, nil
}

// listPods lists the pods of every namespace that holds a workload.
func (s *Snapshot) listPods(ctx context.Context, r Reader) error {
	seen := map[string]bool{}
	var namespaces []string
	for _, o := range s.Objects {
		if o.Live != nil && isWorkload(o.Ref) && !seen[o.Ref.Namespace] {
			seen[o.Ref.Namespace] = true
			namespaces = append(namespaces, o.Ref.Namespace)
		}
	}
	sort.Strings(namespaces)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, ns := range namespaces {
		g.Go(func() error {
			pods, err := r.List(gctx, podGVK, ns)
			mu.Lock()
			s.Pods[ns] = pods
			mu.Unlock()
			return err
		})
	}
	return g.Wait()
}

// explain prefixes an error with what it means for the user: the cluster
// is unreachable, access was denied, or time ran out.
func explain(err error) error {
	var netErr net.Error
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("access denied (RBAC: grant get/list on it): %w", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("not authenticated (check the kubeconfig credentials): %w", err)
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("timed out (--timeout bounds the whole command): %w", err)
	case errors.As(err, &netErr):
		return fmt.Errorf("the cluster is unreachable: %w", err)
	}
	return err
}
