# Real-cluster test assets (kube-apiserver v1.37.2 + etcd) for
# internal/testutil/cluster. Include from the top-level Makefile:
#
#     include .ci/cluster.mk
#     test: $(CLUSTER_ASSETS_DEP)
#
# Variables (command line or environment):
#   GATE_CLUSTER_ASSETS  directory holding the kube-apiserver and etcd
#                        executables; built outside the repo, in the user
#                        cache, keyed by version (cold build ~6 min, ~2.7 GB
#                        RAM; later runs are no-ops). Exported, so `go test`
#                        run by make finds the binaries.
#   SKIP_CLUSTER=1       skip everything that needs a real cluster: the
#                        assets are not built, and cluster.Start skips each
#                        test that calls it (also honoured by plain go test).
#   GATE_CLUSTER_REQUIRED=1
#                        missing assets fail the cluster tests instead of
#                        skipping them (set it in CI so a broken build can't
#                        hide behind a skip).
#
# `make cluster-assets` records the directory in $(CLUSTER_ASSETS_RECORD)
# (keep bin/ ignored by git). From a shell:
#     export GATE_CLUSTER_ASSETS=$$(cat bin/cluster-assets.dir)

# Including this file must not change the Makefile's default goal.
_cluster_default_goal := $(.DEFAULT_GOAL)

CLUSTER_KUBE_VERSION  := v1.37.2
GATE_CLUSTER_ASSETS   ?= $(if $(XDG_CACHE_HOME),$(XDG_CACHE_HOME),$(HOME)/.cache)/kubectl-gate/cluster-$(CLUSTER_KUBE_VERSION)
CLUSTER_ASSETS_RECORD ?= bin/cluster-assets.dir
SKIP_CLUSTER          ?=
export GATE_CLUSTER_ASSETS SKIP_CLUSTER

# Prerequisite for targets that run cluster tests: empty when SKIP_CLUSTER=1.
CLUSTER_ASSETS_DEP := $(if $(filter 1,$(SKIP_CLUSTER)),,cluster-assets)

.PHONY: cluster-assets
cluster-assets:
	@mkdir -p $(dir $(CLUSTER_ASSETS_RECORD))
	@dir=$$(GATE_CLUSTER_ASSETS='$(GATE_CLUSTER_ASSETS)' bash .ci/cluster-assets.sh | tail -n1) && \
		test -n "$$dir" && test -x "$$dir/kube-apiserver" && test -x "$$dir/etcd" && \
		echo "$$dir" > $(CLUSTER_ASSETS_RECORD) && \
		echo "cluster assets: $$dir (recorded in $(CLUSTER_ASSETS_RECORD))"

.DEFAULT_GOAL := $(_cluster_default_goal)
