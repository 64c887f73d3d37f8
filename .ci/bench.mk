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
#   kubeconform v0.8.0   schema validation of the same render, offline, -strict:
#                        JSON schemas made by its scripts/openapi2jsonschema.py
#                        from the OpenAPI v3 and Rollout CRD the gate embeds
#                        (.ci/schemas.mk; all from the module proxy)
#   kubectl-validate v0.0.4  the same, with the API server's validation code;
#                        best effort: if it does not build, the bench says so
#   kyverno v1.19.1      `make policy-tools` (.ci/policy.mk; ~5 min cold): the
#                        require-pinned VAP and a ClusterPolicy (.ci/bench/kyverno)
#
# Knobs (environment): BENCH_RUNS (3), BENCH_JOBS (8), BENCH_DELAY (20ms),
# BENCH_CRANE_SAMPLE (1000; 0 = the whole 4,000-reference loop), BENCH_CHECK_N
# (10000; smaller only to try the script out), BENCH_SPEED_N ("9020 36020":
# the renders of the paired speed rows), BENCH_ESTATE_APPS ("500 2000") and
# BENCH_ESTATE_OBJECTS (50): the --apps-root estate rows,
# BENCH_SPLIT (1: also time the check with Rollouts rules off), BENCH_GO (1:
# the Go benchmarks), BENCH_PIN (1: pin, verify, ApplicationSets),
# BENCH_CMD_TIMEOUT (900 s per command), BENCH_KEEP (1: keep the work
# directory), BENCH_OUT (.cache/bench/summary.txt).

CRANE_VERSION       := v0.22.1
CONFTEST_VERSION    := v0.71.1
KUBECONFORM_VERSION := v0.8.0
KUBECTL_VALIDATE_VERSION := v0.0.4
# The peers' schemas are the gate's (.ci/schemas.mk, included later: these
# expand when the recipe runs): the newest Kubernetes release it embeds and
# the module:directory of its Argo Rollouts CRDs.
bench_comma := ,
BENCH_K8S_SCHEMA_VERSION = $(lastword $(subst $(bench_comma), ,$(SCHEMA_KUBERNETES_VERSIONS)))
BENCH_ROLLOUTS_CRDS      = $(filter github.com/argoproj/argo-rollouts@%,$(subst $(bench_comma), ,$(SCHEMA_CRDS)))

CRANE       := $(TOOLS)/crane-$(CRANE_VERSION)/crane
CONFTEST    := $(TOOLS)/conftest-$(CONFTEST_VERSION)/conftest
KUBECONFORM := $(TOOLS)/kubeconform-$(KUBECONFORM_VERSION)/kubeconform
KUBECTL_VALIDATE := $(TOOLS)/kubectl-validate-$(KUBECTL_VALIDATE_VERSION)/kubectl-validate

.PHONY: bench bench-tools bench-kubectl-validate
bench: build bench-tools policy-tools $(HELM)
	GO="$(GO)" GATE="$(BIN)/kubectl-gate" CRANE="$(CRANE)" CONFTEST="$(CONFTEST)" \
	KUBECONFORM="$(KUBECONFORM)" KUBECONFORM_VERSION="$(KUBECONFORM_VERSION)" \
	KUBECTL_VALIDATE="$(KUBECTL_VALIDATE)" KYVERNO="$(KYVERNO)" \
	KUBECTL_VALIDATE_WHY="$$(tail -n 1 $(dir $(KUBECTL_VALIDATE))install.log 2>/dev/null)" \
	K8S_SCHEMA_VERSION="$(BENCH_K8S_SCHEMA_VERSION)" ROLLOUTS_CRDS="$(BENCH_ROLLOUTS_CRDS)" \
	bash .ci/bench.sh
	@# Helm: render + check of a 500-object chart, --chart vs helm template | check -f -
	GATE="$(BIN)/kubectl-gate" HELM="$(HELM)" bash .ci/bench-helm.sh
	@# diff --base on 200 Applications, one changed, vs one app + git, vs everything twice (issue 20)
	GO="$(GO)" GATE="$(BIN)/kubectl-gate" bash .ci/bench-diff.sh

bench-tools: $(CRANE) $(CONFTEST) $(KUBECONFORM) bench-kubectl-validate

# kubectl-validate is a peer, not a prerequisite: a failed build is recorded
# in install.log beside it, and .ci/bench.sh reports the row as skipped.
bench-kubectl-validate:
	@[ -x "$(KUBECTL_VALIDATE)" ] || { mkdir -p "$(dir $(KUBECTL_VALIDATE))" && \
		echo "installing kubectl-validate $(KUBECTL_VALIDATE_VERSION)" && \
		GOBIN="$(dir $(KUBECTL_VALIDATE))" $(GO) install sigs.k8s.io/kubectl-validate@$(KUBECTL_VALIDATE_VERSION) \
			>"$(dir $(KUBECTL_VALIDATE))install.log" 2>&1 || \
		echo "go install sigs.k8s.io/kubectl-validate@$(KUBECTL_VALIDATE_VERSION) failed: does not build here" \
			| tee -a "$(dir $(KUBECTL_VALIDATE))install.log"; }

$(TOOLS)/crane-%/crane:
	GOBIN=$(@D) $(GO) install github.com/google/go-containerregistry/cmd/crane@$*

$(TOOLS)/conftest-%/conftest:
	@echo "installing conftest $* (~2 min the first time)"
	GOBIN=$(@D) $(GO) install github.com/open-policy-agent/conftest@$*

$(TOOLS)/kubeconform-%/kubeconform:
	GOBIN=$(@D) $(GO) install github.com/yannh/kubeconform/cmd/kubeconform@$*
