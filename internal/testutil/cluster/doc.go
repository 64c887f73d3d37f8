// Package cluster starts a real, throw-away Kubernetes control plane for
// tests: an etcd and a kube-apiserver (v1.37.2) on loopback, with an admin
// token, AlwaysAllow authorization and no controllers or nodes.
//
// The binaries are not downloaded by the tests. Build them once with
//
//	make cluster-assets            # or: bash .ci/cluster-assets.sh
//
// and point GATE_CLUSTER_ASSETS at the directory the script prints (make
// exports it for `make test`). Without it, [Start] skips the test, unless
// GATE_CLUSTER_REQUIRED=1 (CI) turns the skip into a failure. SKIP_CLUSTER=1
// skips every test that needs the cluster.
//
// A test gets a kubeconfig file (context "gate-test"), a *rest.Config, and
// helpers to create arbitrary objects, CRDs and custom resources included
// ([Cluster.Apply]), and to write their .status through the status
// subresource ([Cluster.SetStatus]), since no controller runs to do it.
// [Cluster.Stop] takes the control plane down mid-test to exercise "cluster
// unreachable" paths; t.Cleanup stops it in any case. Process logs stay in
// [Cluster.Dir] (etcd.log, kube-apiserver.log).
package cluster
