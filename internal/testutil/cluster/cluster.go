package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// EnvAssets names the directory holding the kube-apiserver and etcd binaries.
	EnvAssets = "GATE_CLUSTER_ASSETS"
	// EnvRequired, set to 1, makes missing assets fail the test instead of skipping it.
	EnvRequired = "GATE_CLUSTER_REQUIRED"
	// EnvSkip, set to 1, skips every test that needs the cluster.
	EnvSkip = "SKIP_CLUSTER"
	// ContextName is the kubeconfig context (and cluster and user) written by Start.
	ContextName = "gate-test"

	etcdTimeout  = 30 * time.Second
	readyTimeout = 60 * time.Second
	stopGrace    = 10 * time.Second
	// kube-apiserver closes its port at once on SIGTERM but then spends ~4 s
	// stopping its ServiceCIDR allocator; its state is thrown away anyway.
	apiserverGrace = 2 * time.Second
	startTries     = 3
)

// Cluster is a running etcd + kube-apiserver pair on loopback.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig file whose current context,
	// ContextName, reaches the API server as a system:masters user.
	Kubeconfig string
	// Dir is the temp dir with the logs (etcd.log, kube-apiserver.log),
	// certificates, keys and etcd data.
	Dir string
	// Server is the API server URL, https://127.0.0.1:PORT.
	Server string
	// Token is the admin bearer token.
	Token string

	etcd, apiserver *process
	stopOnce        sync.Once

	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// Start launches etcd and kube-apiserver, waits for /readyz, writes the
// kubeconfig and registers a cleanup that stops both. It skips the test when
// the binaries are not available (see the package doc).
func Start(t testing.TB) *Cluster {
	t.Helper()
	etcdBin, apiserverBin := assets(t)
	began := time.Now()
	c := &Cluster{Dir: t.TempDir()}
	t.Cleanup(c.Stop)

	if err := c.writeCredentials(); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	etcdURL, err := retryPorts(func() (*process, string, error) { return c.startEtcd(etcdBin) })
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	if c.Server, err = retryPorts(func() (*process, string, error) { return c.startAPIServer(apiserverBin, etcdURL) }); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	if err := c.writeKubeconfig(); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	if err := c.initClients(); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	t.Logf("cluster: kube-apiserver %s ready in %s (logs in %s)", c.Server, time.Since(began).Round(time.Millisecond), c.Dir)
	return c
}

// assets returns the binary paths, or skips (fails under EnvRequired=1).
func assets(t testing.TB) (etcdBin, apiserverBin string) {
	t.Helper()
	if os.Getenv(EnvSkip) == "1" {
		t.Skipf("cluster: %s=1: skipping a test that needs a real kube-apiserver", EnvSkip)
	}
	give := t.Skipf
	if os.Getenv(EnvRequired) == "1" {
		give = t.Fatalf
	}
	const how = "run `make cluster-assets` (or `export %s=$(bash .ci/cluster-assets.sh | tail -n1)`) to build kube-apiserver and etcd, then rerun with %s set"
	dir := os.Getenv(EnvAssets)
	if dir == "" {
		give("cluster: %s is not set; "+how, EnvAssets, EnvAssets, EnvAssets)
	}
	etcdBin, apiserverBin = filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	for _, bin := range []string{etcdBin, apiserverBin} {
		if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			give("cluster: no executable %s (%s=%s); "+how, bin, EnvAssets, dir, EnvAssets, EnvAssets)
		}
	}
	return etcdBin, apiserverBin
}

// retryPorts runs start again when the process lost a race for its port.
func retryPorts(start func() (*process, string, error)) (string, error) {
	for try := 1; ; try++ {
		p, url, err := start()
		if err == nil || p == nil || try == startTries || !p.addrInUse() {
			return url, err
		}
		p.stop(stopGrace)
	}
}

func (c *Cluster) startEtcd(bin string) (*process, string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, "", err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p, err := startProcess("etcd", bin, filepath.Join(c.Dir, "etcd.log"),
		"--name=gate-test",
		"--data-dir="+filepath.Join(c.Dir, fmt.Sprintf("etcd-data-%d", ports[0])),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=gate-test="+peer,
	)
	if err != nil {
		return nil, "", err
	}
	c.etcd = p
	err = p.waitReady(etcdTimeout, func() error {
		body, err := get(client+"/health", "")
		if err == nil && !strings.Contains(body, `"health":"true"`) {
			err = fmt.Errorf("%w: %s", errNotReady, body)
		}
		return err
	})
	return p, client, err
}

func (c *Cluster) startAPIServer(bin, etcdURL string) (*process, string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, "", err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	p, err := startProcess("kube-apiserver", bin, filepath.Join(c.Dir, "kube-apiserver.log"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--cert-dir="+filepath.Join(c.Dir, "certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(c.Dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(c.Dir, "sa.key"),
		"--token-auth-file="+filepath.Join(c.Dir, "tokens.csv"),
		"--authorization-mode=AlwaysAllow",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true", // as every production cluster (internal/apivalidation/capabilities.go)
		// No controller-manager creates the "default" ServiceAccount, so
		// without this Pods could not be created.
		"--disable-admission-plugins=ServiceAccount",
	)
	if err != nil {
		return nil, "", err
	}
	c.apiserver = p
	err = p.waitReady(readyTimeout, func() error {
		_, err := get(server+"/readyz", c.Token)
		return err
	})
	return p, server, err
}

// writeCredentials writes the service-account key pair and the token file.
func (c *Cluster) writeCredentials() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account RSA key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return fmt.Errorf("generate admin token: %w", err)
	}
	c.Token = hex.EncodeToString(tok)
	files := map[string][]byte{
		"sa.key":     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"tokens.csv": fmt.Appendf(nil, "%s,gate-admin,gate-admin,\"system:masters\"\n", c.Token),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.Dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

func (c *Cluster) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: c.Server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[ContextName] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: ContextName, Namespace: "default"}
	cfg.CurrentContext = ContextName
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", c.Kubeconfig, err)
	}
	return nil
}

func (c *Cluster) initClients() error {
	cfg := c.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create dynamic client for %s: %w", c.Server, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create discovery client for %s: %w", c.Server, err)
	}
	c.dyn, c.mapper = dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return nil
}

// RESTConfig returns a new client config for the admin user.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100,
		Burst:           200,
	}
}

// Stop terminates kube-apiserver and etcd (SIGTERM, then SIGKILL after 2 s
// and 10 s).
// The kubeconfig keeps pointing at the dead port, so clients see the cluster
// as down. Stop is idempotent and also runs in t.Cleanup.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.apiserver.stop(apiserverGrace)
		c.etcd.stop(stopGrace)
	})
}

var insecureHTTP = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// get fetches url (with a bearer token if given) and wants 200 OK.
func get(url, token string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("build request for %s: %w", url, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("GET %s: %w: %s: %s", url, errNotReady, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}
