// Package pullsecrets selects and reads the image pull secrets a render's
// workloads will pull with, for `--pull-secrets-from CONTEXT`.
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
package pullsecrets
