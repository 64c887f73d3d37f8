# kubectl-gate — make targets are the interface; CI runs `make test`.
#
#   make demo    the main job end to end, offline: red on the bad overlay, green
#                on the good one, the same inside `kustomize build`
#   make test    unit + end-to-end tests (real kustomize CLI, kubectl, in-process
#                OCI registry, a real kube-apiserver + etcd; SKIP_CLUSTER=1 skips
#                the cluster part)
#   make bench   benchmarks and peers side by side, ratios printed
#   make schema-agreement  the gate, kubeconform and kubectl-validate vs a real
#                API server on the schema agreement set (needs cluster assets)

SHELL      := bash
GO         ?= go
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -s -w -X main.version=$(VERSION)
BIN        := $(CURDIR)/bin
TOOLS      ?= $(CURDIR)/.cache/tools
KUSTOMIZE_VERSION     := v5.8.2
KUSTOMIZE_OLD_VERSION := v5.5.0
KUSTOMIZE     := $(TOOLS)/kustomize-$(KUSTOMIZE_VERSION)/kustomize
KUSTOMIZE_OLD := $(TOOLS)/kustomize-$(KUSTOMIZE_OLD_VERSION)/kustomize
# The helm CLI the Helm parity tests compare with (internal/helm; ~4 min cold).
HELM_VERSION  := v4.3.2
HELM          := $(TOOLS)/helm-$(HELM_VERSION)/helm
export KUSTOMIZE KUSTOMIZE_OLD HELM

.DEFAULT_GOAL := all

include .ci/cluster.mk
-include .ci/rollouts.mk
-include .ci/bench.mk
-include .ci/dist.mk
include .ci/fuzz.mk
include .ci/browser.mk
-include .ci/schemas.mk
-include .ci/policy.mk
-include .ci/flux.mk
-include .ci/schema-agreement.mk
include .ci/cosign.mk

.PHONY: all build test unit e2e demo lint tools helm-tools bench clean
all: build

build: $(BIN)/kubectl-gate $(BIN)/gate-fn $(BIN)/kubectl_complete-gate

$(BIN)/kubectl-gate: $(shell find cmd plugin internal -name '*.go' -not -name '*_test.go') go.mod go.sum
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/kubectl-gate

# What kubectl (1.26+) runs to complete `kubectl gate <TAB>`: it asks
# kubectl-gate next to it (plugin/complete.go).
$(BIN)/kubectl_complete-gate: cmd/kubectl_complete-gate/main.go go.mod
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/kubectl_complete-gate

$(BIN)/gate-fn: $(shell find cmd fn internal -name '*.go' -not -name '*_test.go') go.mod go.sum
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/gate-fn

tools: $(KUSTOMIZE) $(KUSTOMIZE_OLD)

# helm-tools: the helm CLI the Helm parity tests compare with (make test
# needs it; make demo does not).
helm-tools: $(HELM)

$(TOOLS)/kustomize-%/kustomize:
	GOBIN=$(dir $@) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$*

$(TOOLS)/helm-%/helm:
	GOBIN=$(dir $@) $(GO) install helm.sh/helm/v4/cmd/helm@$*

# test: what CI runs. Binaries are built first so the end-to-end tests run
# exactly what a user installs; bin/ goes first on PATH so the real kubectl
# dispatches `kubectl gate` to it.
test: build tools helm-tools dist-tools policy-tools flux-tools browser-tools cosign-tools $(CLUSTER_ASSETS_DEP)
	PATH="$(BIN):$$PATH" GATE_REQUIRE_TOOLS=1 GATE_BIN_FRESH=1 $(GO) test -count=1 ./...

unit:
	$(GO) test -count=1 -short ./...

e2e: build tools helm-tools dist-tools policy-tools flux-tools browser-tools cosign-tools $(CLUSTER_ASSETS_DEP)
	PATH="$(BIN):$$PATH" GATE_REQUIRE_TOOLS=1 GATE_BIN_FRESH=1 $(GO) test -count=1 -run 'E2E' ./...

# demo needs one kustomize (the current one): `tools` also builds the old
# version the compatibility tests use, which the demo never runs.
demo: build $(KUSTOMIZE) $(BIN)/registry
	@PATH="$(BIN):$$PATH" bash examples/demo.sh

# The demo's loopback registry: a test and demo tool, never shipped.
$(BIN)/registry: examples/registry/main.go go.mod go.sum
	$(GO) build -o $@ ./examples/registry

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN) dist
