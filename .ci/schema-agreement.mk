# make schema-agreement (issue 11): the gate, kubeconform -strict and
# kubectl-validate side by side on the agreement set of internal/schema,
# each verdict compared with a real kube-apiserver's (.ci/schema-agreement.sh).
# Included from the top-level Makefile after .ci/bench.mk (the peers'
# versions and install rules) and .ci/schemas.mk (the Kubernetes version).
# Not part of `make test`: it needs the cluster assets (GATE_CLUSTER_ASSETS,
# `make cluster-assets`; missing ones fail, never skip) and the vendored corpus (testdata/corpus),
# and takes minutes.

.PHONY: schema-agreement
schema-agreement: $(BIN)/kubectl-gate $(KUBECONFORM) bench-kubectl-validate
	GO="$(GO)" GATE="$(BIN)/kubectl-gate" \
	KUBECONFORM="$(KUBECONFORM)" KUBECONFORM_VERSION="$(KUBECONFORM_VERSION)" \
	KUBECTL_VALIDATE="$(KUBECTL_VALIDATE)" KUBECTL_VALIDATE_VERSION="$(KUBECTL_VALIDATE_VERSION)" K8S_SCHEMA_VERSION="$(BENCH_K8S_SCHEMA_VERSION)" \
	bash .ci/schema-agreement.sh
