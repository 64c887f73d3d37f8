package pullsecrets

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	k8sauthn "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Cluster is a connection to the cluster the secrets are read from: a
// client and the namespace of its kubeconfig context.
type Cluster struct {
	Client           kubernetes.Interface
	DefaultNamespace string
}

// Reader reads image pull secrets from one cluster, once per object per
// run, for every render of the run. It connects on first use.
type Reader struct {
	name    string // the kubeconfig context, for messages
	connect func() (Cluster, error)
	timeout time.Duration

	mu        sync.Mutex
	connected bool
	cluster   Cluster
	connErr   error
	sas       map[string]saAnswer
	secrets   map[string]secretAnswer
}

type saAnswer struct {
	found   bool
	secrets []string
	err     error
}

type secretAnswer struct {
	kc  authn.Keychain
	err error
}

// NewReader returns a Reader of the cluster that connect reaches; name (the
// kubeconfig context) prefixes every error, timeout bounds each Keychain call.
func NewReader(name string, timeout time.Duration, connect func() (Cluster, error)) *Reader {
	return &Reader{name: name, connect: connect, timeout: timeout, sas: map[string]saAnswer{}, secrets: map[string]secretAnswer{}}
}

// PodAuth is what one pod spec pulls with: its namespace, ServiceAccount and
// pod-level imagePullSecrets ("" namespace: the context's).
type PodAuth struct {
	Namespace, ServiceAccount string
	PullSecrets               string // comma-joined, in the pod spec's order
}

// Keychain returns the keychain of a render's workloads (extra: the
// configured pod spec paths of custom kinds) and an id that is equal for
// equal sets of secrets.
func (p *Reader) Keychain(ctx context.Context, resources []*yaml.RNode, extra []images.PodSpecPath) (authn.Keychain, string, error) {
	pods, renderSAs := PodAuths(resources, extra)
	if len(pods) == 0 {
		return authn.DefaultKeychain, "", nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.connectOnce(); err != nil {
		return nil, "", err
	}
	sas := map[string][]string{} // the render's ServiceAccounts, by namespace/name
	for key, names := range renderSAs {
		if strings.HasPrefix(key, "/") {
			key = p.cluster.DefaultNamespace + key
		}
		sas[key] = names
	}
	var podLevel, saLevel []string // namespace/name of the secrets
	for _, pa := range pods {
		ns := cmp.Or(pa.Namespace, p.cluster.DefaultNamespace)
		if pa.PullSecrets != "" {
			for name := range strings.SplitSeq(pa.PullSecrets, ",") {
				podLevel = append(podLevel, ns+"/"+name)
			}
			continue
		}
		names, err := p.serviceAccountSecrets(ctx, ns, pa.ServiceAccount, sas)
		if err != nil {
			return nil, "", err
		}
		for _, name := range names {
			saLevel = append(saLevel, ns+"/"+name)
		}
	}
	slices.Sort(podLevel)
	slices.Sort(saLevel)
	var keys []string
	for _, key := range append(podLevel, saLevel...) {
		if slices.Contains(keys, key) {
			continue
		}
		keys = append(keys, key)
	}
	keychains := make([]authn.Keychain, 0, len(keys)+1)
	for _, key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		kc, err := p.secret(ctx, ns, name)
		if err != nil {
			return nil, "", err
		}
		keychains = append(keychains, kc)
	}
	keychains = append(keychains, authn.DefaultKeychain)
	return authn.NewMultiKeychain(keychains...), strings.Join(keys, ","), nil
}

// PodAuths lists the unique PodAuth of the render's pod specs, and the
// imagePullSecrets of the ServiceAccounts the render declares (by
// "namespace/name"; "" namespace: the context's).
func PodAuths(resources []*yaml.RNode, extra []images.PodSpecPath) ([]PodAuth, map[string][]string) {
	seen := map[PodAuth]bool{}
	var pods []PodAuth
	renderSAs := map[string][]string{}
	for _, obj := range resources {
		ns := obj.GetNamespace()
		if obj.GetKind() == "ServiceAccount" && obj.GetApiVersion() == "v1" {
			renderSAs[ns+"/"+obj.GetName()] = secretNames(yamlpath.Field(obj.YNode(), "imagePullSecrets"))
			continue
		}
		for _, spec := range images.PodSpecs(obj, extra) {
			ps := spec.Node
			sa := yamlpath.String(ps, "serviceAccountName")
			if sa == "" {
				sa = yamlpath.String(ps, "serviceAccount") // deprecated alias
			}
			if sa == "" {
				sa = "default"
			}
			pa := PodAuth{Namespace: ns, ServiceAccount: sa,
				PullSecrets: strings.Join(secretNames(yamlpath.Field(ps, "imagePullSecrets")), ",")}
			if !seen[pa] {
				seen[pa] = true
				pods = append(pods, pa)
			}
		}
	}
	return pods, renderSAs
}

// secretNames reads a list of LocalObjectReference.
func secretNames(list *yaml.Node) []string {
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, item := range list.Content {
		if n := yamlpath.String(item, "name"); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// connectOnce connects on first use and remembers the outcome.
func (p *Reader) connectOnce() error {
	if p.connected {
		return p.connErr
	}
	p.connected = true
	p.cluster, p.connErr = p.connect()
	if p.connErr != nil {
		p.connErr = p.errorf("%w", p.connErr)
	}
	return p.connErr
}

// serviceAccountSecrets returns the imagePullSecrets of a ServiceAccount:
// the render's when the render declares it, else the cluster's.
func (p *Reader) serviceAccountSecrets(ctx context.Context, ns, name string, renderSAs map[string][]string) ([]string, error) {
	if names, ok := renderSAs[ns+"/"+name]; ok {
		return names, nil
	}
	key := ns + "/" + name
	a, ok := p.sas[key]
	if !ok {
		sa, err := p.cluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			a = saAnswer{found: true}
			for _, ref := range sa.ImagePullSecrets {
				if ref.Name != "" && !slices.Contains(a.secrets, ref.Name) {
					a.secrets = append(a.secrets, ref.Name)
				}
			}
		case apierrors.IsNotFound(err):
			a = saAnswer{}
		default:
			a = saAnswer{err: p.errorf("reading ServiceAccount %s: %w", key, err)}
		}
		p.sas[key] = a
	}
	if a.err != nil {
		return nil, a.err
	}
	if !a.found && name != "default" {
		return nil, p.errorf("ServiceAccount %s not found (nor in the render); the workloads that use it cannot start", key)
	}
	return a.secrets, nil
}

// secret reads one pull secret and parses it into a keychain.
func (p *Reader) secret(ctx context.Context, ns, name string) (authn.Keychain, error) {
	key := ns + "/" + name
	if a, ok := p.secrets[key]; ok {
		return a.kc, a.err
	}
	var a secretAnswer
	s, err := p.cluster.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		a.err = p.errorf("Secret %s not found (an imagePullSecrets entry)", key)
	case err != nil:
		a.err = p.errorf("reading Secret %s: %w", key, err)
	default:
		a.kc, a.err = SecretKeychain(s)
		if a.err != nil {
			a.err = p.errorf("Secret %s: %w", key, a.err)
		}
	}
	p.secrets[key] = a
	return a.kc, a.err
}

// SecretKeychain checks a Secret's type and data and parses it with
// go-containerregistry's pkg/authn/kubernetes. Parse errors are not passed
// on: they could quote the Secret's bytes.
func SecretKeychain(s *corev1.Secret) (authn.Keychain, error) {
	var dataKey string
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		dataKey = corev1.DockerConfigJsonKey
	case corev1.SecretTypeDockercfg:
		dataKey = corev1.DockerConfigKey
	default:
		return nil, fmt.Errorf("type %q is not %s or %s", s.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	if len(s.Data[dataKey]) == 0 {
		return nil, fmt.Errorf("no %s data", dataKey)
	}
	kc, err := k8sauthn.NewFromPullSecrets(context.Background(), []corev1.Secret{*s})
	if err != nil {
		return nil, fmt.Errorf("its %s data is not a valid docker config", dataKey)
	}
	return kc, nil
}

func (p *Reader) errorf(format string, args ...any) error {
	return fmt.Errorf("--pull-secrets-from %s: "+format, append([]any{p.name}, args...)...)
}
