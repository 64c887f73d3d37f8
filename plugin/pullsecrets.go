package plugin

// --pull-secrets-from CONTEXT: registry credentials from the cluster. The
// shell loads the kubeconfig context; internal/pullsecrets says which
// secrets a render's workloads pull with, reads them and fails closed.

import (
	"fmt"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-gate/kubectl-gate/internal/pullsecrets"
)

// pullSecretsRequestTimeout bounds each request to the cluster.
const pullSecretsRequestTimeout = 10 * time.Second

// newPullSecrets returns nil without --pull-secrets-from; with it, a reader
// of the cluster of that kubeconfig context (internal/pullsecrets selects
// the secrets and reads them).
func newPullSecrets(o *options) *pullsecrets.Reader {
	if o.pullSecretsFrom == "" {
		return nil
	}
	return pullsecrets.NewReader(o.pullSecretsFrom, o.timeout, func() (pullsecrets.Cluster, error) {
		return connectContext(o.pullSecretsFrom, o.kubeconfig, o.timeout)
	})
}

// validatePullSecretFlags checks the cluster flags of check, pin and selftest.
func (o *options) validatePullSecretFlags() error {
	if o.kubeconfig != "" && o.pullSecretsFrom == "" {
		return usageErr("--kubeconfig", "is only read with --pull-secrets-from CONTEXT (without it the cluster is never asked)")
	}
	return nil
}

// connectContext loads a kubeconfig context as kubectl does.
func connectContext(kubeContext, kubeconfig string, timeout time.Duration) (pullsecrets.Cluster, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.Context = &kubeContext
	if kubeconfig != "" {
		flags.KubeConfig = &kubeconfig
	}
	var c pullsecrets.Cluster
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return c, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.Timeout = min(pullSecretsRequestTimeout, timeout)
	cfg.QPS, cfg.Burst = 50, 100
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return c, fmt.Errorf("building the client: %w", err)
	}
	if c.DefaultNamespace, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
		return c, fmt.Errorf("reading the context's namespace: %w", err)
	}
	return c, nil
}
