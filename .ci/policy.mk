# Policy tools for the policy rule's runners (internal/policy/external) and
# `make bench`: the Kyverno CLI and conftest, installed into $(TOOLS)
# (.cache/tools, gitignored, never committed), one directory per version.
# Included from the top-level Makefile (`-include .ci/policy.mk`).
#
#   make policy-tools    build/install both (kyverno: ~5 min cold, a scratch
#                        module outside the repo, see .ci/kyverno.sh)
#
# KYVERNO and CONFTEST are exported so `go test` finds the real CLIs.

KYVERNO_VERSION := v1.19.1
KYVERNO         := $(TOOLS)/kyverno-$(KYVERNO_VERSION)/kyverno
CONFTEST_VERSION ?= v0.71.1
CONFTEST        ?= $(TOOLS)/conftest-$(CONFTEST_VERSION)/conftest
export KYVERNO CONFTEST

.PHONY: policy-tools
policy-tools: $(KYVERNO) $(CONFTEST)

$(TOOLS)/kyverno-%/kyverno:
	KYVERNO_VERSION=$* bash .ci/kyverno.sh $(@D)
