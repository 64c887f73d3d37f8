package apivalidation

import "k8s.io/kubernetes/pkg/capabilities"

// The API server's pod validation forbids privileged containers and
// Windows hostProcess pods unless it was started with --allow-privileged.
// That flag defaults to false in kube-apiserver, but every cluster a GitOps
// repository deploys to sets it: kubeadm, kind, k3s, GKE, EKS and AKS all
// start the API server with --allow-privileged=true, and node agents (CNI,
// CSI, log shippers) need it. Validating as a cluster without it would
// flag every such DaemonSet as "disallowed by cluster policy". The setting
// is process-global and read once, so it is fixed here, before any
// validation runs; the test cluster of the agreement test starts with the
// same flag.
func init() {
	capabilities.Setup(true, 0)
}
