# make schemas: regenerate the schema data embedded by internal/schema
# (internal/schema/data, committed so builds stay offline). Included from the
# top-level Makefile (`-include .ci/schemas.mk`).
#
# Every Kubernetes minor from 1.28 to the newest (managed offerings still run
# 1.30–1.33), and the CRDs of the projects the
# gate knows (Flux: the controllers that FLUX_VERSION in .ci/flux.mk ships);
# every module comes from the Go module proxy (`go mod download`).

SCHEMA_KUBERNETES_VERSIONS := v1.28.15,v1.29.15,v1.30.14,v1.31.14,v1.32.13,v1.33.13,v1.34.4,v1.35.4,v1.36.3,v1.37.2
SCHEMA_CRDS := github.com/argoproj/argo-rollouts@v1.10.2:manifests/crds,$\
github.com/argoproj/argo-cd/v3@v3.6.1:manifests/crds,$\
github.com/argoproj-labs/argocd-operator@v0.17.0:config/crd/bases:argoproj.io_argocds.yaml+argoproj.io_argocdexports.yaml+argoproj.io_notificationsconfigurations.yaml+argoproj.io_namespacemanagements.yaml,$\
github.com/cert-manager/cert-manager@v1.21.2:deploy/crds,$\
github.com/external-secrets/external-secrets@v1.3.2:config/crds/bases,$\
github.com/fluxcd/kustomize-controller@v1.9.5:config/crd/bases,$\
github.com/fluxcd/source-controller@v1.9.5:config/crd/bases,$\
github.com/fluxcd/helm-controller@v1.6.4:config/crd/bases

.PHONY: schemas
schemas:
	$(GO) run ./internal/schema/gen -out internal/schema/data \
		-kubernetes '$(SCHEMA_KUBERNETES_VERSIONS)' -crds '$(SCHEMA_CRDS)'
