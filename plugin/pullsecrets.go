package plugin

// --pull-secrets-from CONTEXT: registry credentials from the cluster.
//
// Without the flag the resolver authenticates with authn.DefaultKeychain
// only (docker config, credential helpers) and never talks to a cluster. With
// it, for each render (one -k, one -f input, the --write-kustomization
// directory) the plugin reads from the cluster of the kubeconfig context
// CONTEXT the image pull secrets the render's workloads will pull with, and
// puts them in front of authn.DefaultKeychain (authn.NewMultiKeychain: the
// first keychain with credentials for a repository wins).
//
// Which secrets a workload pulls with follows the ServiceAccount admission
// plugin: the pod spec's imagePullSecrets when it has any, otherwise those of
// its ServiceAccount (spec.serviceAccountName, else "default") in the
// workload's namespace (metadata.namespace, else the context's namespace).
// The ServiceAccount is read from the render when the render declares it
// (that is what will be applied), otherwise from the cluster; a missing
// "default" ServiceAccount has no secrets, any other missing ServiceAccount
// is an error (the pods would be rejected).
//
// One keychain per render: the resolver answers each unique reference once,
// so the keychain is the union of the secrets of every (namespace,
// serviceAccountName, imagePullSecrets) the render's workloads use, in a
// fixed order (pod-level secrets first, then by namespace and name). A
// reference pulled by two workloads with different credentials is asked once,
// with the first credentials that match its registry.
//
// Fail-closed: a kubeconfig or context that cannot be loaded, an unreachable
// cluster, a missing ServiceAccount or Secret, an RBAC denial, a Secret that is
// not of type kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg, or
// one that does not parse, is an error naming what failed: no verdict, exit 3.
// Secret contents never appear in any message.

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
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// pullSecretsRequestTimeout bounds each request to the cluster.
const pullSecretsRequestTimeout = 10 * time.Second

// pullSecrets reads image pull secrets from one cluster, once per object per
// run, for every render of the run.
type pullSecrets struct {
	context, kubeconfig string
	timeout             time.Duration

	mu        sync.Mutex
	connected bool
	client    kubernetes.Interface
	defaultNS string
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

// newPullSecrets returns nil without --pull-secrets-from.
func newPullSecrets(o *options) *pullSecrets {
	if o.pullSecretsFrom == "" {
		return nil
	}
	return &pullSecrets{context: o.pullSecretsFrom, kubeconfig: o.kubeconfig, timeout: o.timeout,
		sas: map[string]saAnswer{}, secrets: map[string]secretAnswer{}}
}

// validatePullSecretFlags checks the cluster flags of check, pin and selftest.
func (o *options) validatePullSecretFlags() error {
	if o.kubeconfig != "" && o.pullSecretsFrom == "" {
		return usageErr("--kubeconfig", "is only read with --pull-secrets-from CONTEXT (without it the cluster is never asked)")
	}
	return nil
}

// podAuth is what one pod spec pulls with: its namespace, ServiceAccount and
// pod-level imagePullSecrets ("" namespace: the context's).
type podAuth struct {
	namespace, serviceAccount string
	pullSecrets               string // comma-joined, in the pod spec's order
}

// keychain returns the keychain of a render's workloads and an id that is
// equal for equal sets of secrets.
func (p *pullSecrets) keychain(ctx context.Context, spec *config.Spec, resources []*yaml.RNode) (authn.Keychain, string, error) {
	pods, renderSAs := podAuths(resources, spec)
	if len(pods) == 0 {
		return authn.DefaultKeychain, "", nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.connect(); err != nil {
		return nil, "", err
	}
	sas := map[string][]string{} // the render's ServiceAccounts, by namespace/name
	for key, names := range renderSAs {
		if strings.HasPrefix(key, "/") {
			key = p.defaultNS + key
		}
		sas[key] = names
	}
	var podLevel, saLevel []string // namespace/name of the secrets
	for _, pa := range pods {
		ns := cmp.Or(pa.namespace, p.defaultNS)
		if pa.pullSecrets != "" {
			for name := range strings.SplitSeq(pa.pullSecrets, ",") {
				podLevel = append(podLevel, ns+"/"+name)
			}
			continue
		}
		names, err := p.serviceAccountSecrets(ctx, ns, pa.serviceAccount, sas)
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

// podAuths lists the unique podAuth of the render's pod specs, and the
// imagePullSecrets of the ServiceAccounts the render declares (by
// "namespace/name"; "" namespace: the context's).
func podAuths(resources []*yaml.RNode, spec *config.Spec) ([]podAuth, map[string][]string) {
	seen := map[podAuth]bool{}
	var pods []podAuth
	renderSAs := map[string][]string{}
	extra := images.ConfiguredPaths(spec)
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
			pa := podAuth{namespace: ns, serviceAccount: sa,
				pullSecrets: strings.Join(secretNames(yamlpath.Field(ps, "imagePullSecrets")), ",")}
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

// connect loads the kubeconfig context once.
func (p *pullSecrets) connect() error {
	if p.connected {
		return p.connErr
	}
	p.connected = true
	flags := genericclioptions.NewConfigFlags(false)
	flags.Context = &p.context
	if p.kubeconfig != "" {
		flags.KubeConfig = &p.kubeconfig
	}
	p.connErr = func() error {
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			return p.errorf("loading the kubeconfig: %w", err)
		}
		cfg.Timeout = min(pullSecretsRequestTimeout, p.timeout)
		cfg.QPS, cfg.Burst = 50, 100
		if p.client, err = kubernetes.NewForConfig(cfg); err != nil {
			return p.errorf("building the client: %w", err)
		}
		if p.defaultNS, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return p.errorf("reading the context's namespace: %w", err)
		}
		return nil
	}()
	return p.connErr
}

// serviceAccountSecrets returns the imagePullSecrets of a ServiceAccount:
// the render's when the render declares it, else the cluster's.
func (p *pullSecrets) serviceAccountSecrets(ctx context.Context, ns, name string, renderSAs map[string][]string) ([]string, error) {
	if names, ok := renderSAs[ns+"/"+name]; ok {
		return names, nil
	}
	key := ns + "/" + name
	a, ok := p.sas[key]
	if !ok {
		sa, err := p.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
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
func (p *pullSecrets) secret(ctx context.Context, ns, name string) (authn.Keychain, error) {
	key := ns + "/" + name
	if a, ok := p.secrets[key]; ok {
		return a.kc, a.err
	}
	var a secretAnswer
	s, err := p.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		a.err = p.errorf("Secret %s not found (an imagePullSecrets entry)", key)
	case err != nil:
		a.err = p.errorf("reading Secret %s: %w", key, err)
	default:
		a.kc, a.err = pullSecretKeychain(s)
		if a.err != nil {
			a.err = p.errorf("Secret %s: %w", key, a.err)
		}
	}
	p.secrets[key] = a
	return a.kc, a.err
}

// pullSecretKeychain checks a Secret's type and data and parses it with
// go-containerregistry's pkg/authn/kubernetes. Parse errors are not passed
// on: they could quote the Secret's bytes.
func pullSecretKeychain(s *corev1.Secret) (authn.Keychain, error) {
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

func (p *pullSecrets) errorf(format string, args ...any) error {
	return fmt.Errorf("--pull-secrets-from %s: "+format, append([]any{p.context}, args...)...)
}
