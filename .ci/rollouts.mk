# Side-by-side comparison with `kubectl argo rollouts lint` (v1.10.1) on
# every Rollout file of the Argo Rollouts corpus. Include from the top-level
# Makefile:
#
#     include .ci/rollouts.mk
#
# `make compare-rollouts` builds $(BIN)/kubectl-gate (the Makefile's rule),
# builds the peer once in a scratch module outside the repo (cached under
# $${XDG_CACHE_HOME:-~/.cache}/kubectl-gate/tools/, cold: 10-30 min;
# never committed), and prints file × findings of each tool. It fails when
# lint reports a Service-pair problem that kubectl-gate does not.
#
# Variables: ROLLOUTS_LINT (use this peer binary as-is), GATE_CORPUS (corpus
# root, default testdata/corpus, vendored in the repo).

.PHONY: compare-rollouts rollouts-lint
compare-rollouts: $(BIN)/kubectl-gate
	GATE_BIN=$(BIN) bash .ci/compare-rollouts.sh compare

# rollouts-lint only builds (or finds) the peer and prints its path.
rollouts-lint:
	@bash .ci/compare-rollouts.sh build
