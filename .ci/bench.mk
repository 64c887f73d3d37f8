# make bench: kubectl-gate measured next to its peers, one bounded run, ratios
# printed. Included from the top-level Makefile (`-include .ci/bench.mk`).
#
#   make bench          build, install the peers, run .ci/bench.sh
#   make bench-tools    only install the peers
#
# The peers are installed with `go install` from the module proxy into
# $(TOOLS) (.cache/tools, gitignored, never committed), one directory per
# version, so a version bump installs beside the old one:
#
#   crane v0.22.1        `crane digest` per reference: the sequential baseline
#   conftest v0.71.1     the image-digest rule as Rego (.ci/bench/policy); ~110 s cold
#   kubeconform v0.8.0   schema validation of the same render, offline: schemas
#                        made from the Kubernetes swagger.json and the Argo
#                        Rollouts CRD schema (both from the module proxy)
#
# Knobs (environment): BENCH_RUNS (3), BENCH_JOBS (8), BENCH_DELAY (20ms),
# BENCH_CRANE_SAMPLE (1000; 0 = the whole 4,000-reference loop), BENCH_CHECK_N
# (10000; smaller only to try the script out),
# BENCH_SPLIT (1: also time the check with Rollouts rules off), BENCH_GO (1:
# the Go benchmarks), BENCH_CMD_TIMEOUT (900 s per command), BENCH_KEEP (1:
# keep the work directory), BENCH_OUT (.cache/bench/summary.txt).

CRANE_VERSION       := v0.22.1
CONFTEST_VERSION    := v0.71.1
KUBECONFORM_VERSION := v0.8.0
# Where kubeconform's schemas come from (downloaded with `go mod download`).
BENCH_K8S_SCHEMA_VERSION      := v1.37.2
BENCH_ROLLOUTS_SCHEMA_VERSION := v1.10.1

CRANE       := $(TOOLS)/crane-$(CRANE_VERSION)/crane
CONFTEST    := $(TOOLS)/conftest-$(CONFTEST_VERSION)/conftest
KUBECONFORM := $(TOOLS)/kubeconform-$(KUBECONFORM_VERSION)/kubeconform

.PHONY: bench bench-tools
bench: build bench-tools $(HELM)
	GO="$(GO)" GATE="$(BIN)/kubectl-gate" CRANE="$(CRANE)" CONFTEST="$(CONFTEST)" \
	KUBECONFORM="$(KUBECONFORM)" K8S_SCHEMA_VERSION="$(BENCH_K8S_SCHEMA_VERSION)" \
	ROLLOUTS_SCHEMA_VERSION="$(BENCH_ROLLOUTS_SCHEMA_VERSION)" \
	bash .ci/bench.sh
	@# Helm: render + check of a 500-object chart, --chart vs helm template | check -f -
	GATE="$(BIN)/kubectl-gate" HELM="$(HELM)" bash .ci/bench-helm.sh

bench-tools: $(CRANE) $(CONFTEST) $(KUBECONFORM)

$(TOOLS)/crane-%/crane:
	GOBIN=$(@D) $(GO) install github.com/google/go-containerregistry/cmd/crane@$*

$(TOOLS)/conftest-%/conftest:
	@echo "installing conftest $* (~2 min the first time)"
	GOBIN=$(@D) $(GO) install github.com/open-policy-agent/conftest@$*

$(TOOLS)/kubeconform-%/kubeconform:
	GOBIN=$(@D) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$*
