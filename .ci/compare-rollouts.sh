#!/usr/bin/env bash
# compare-rollouts.sh — side-by-side comparison of `kubectl argo rollouts lint`
# (v1.10.1, the Rollouts anchor) and `kubectl gate check` on every Rollout
# file of the Argo Rollouts corpus.
#
# Usage:
#     bash .ci/compare-rollouts.sh build      # only build/cache the peer; prints its path
#     bash .ci/compare-rollouts.sh [compare]  # build if needed, then print the table
#
# Environment:
#   GATE_CORPUS        corpus root (default: testdata/corpus, vendored in the repo)
#   GATE_BIN           directory holding kubectl-gate (default: bin/ in the repo)
#   ROLLOUTS_LINT      path of a kubectl-argo-rollouts binary to use as-is
#   GATE_TOOLS_CACHE   cache dir (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gate/tools)
#
# The peer is built from github.com/argoproj/argo-rollouts@v1.10.1 in a
# throw-away module outside the repository (its go.mod's replace lines are
# copied, as `go install` refuses modules with replace directives), and the
# binary is cached keyed by version. Cold build: ~10 min alone on 2 cores,
# ~30 min beside other builds (measured 1706 s). Nothing is written inside
# the repository.
set -euo pipefail

ROLLOUTS_VERSION=v1.10.1
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${GATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gate/tools}"
PEER_DIR="$CACHE/kubectl-argo-rollouts-${ROLLOUTS_VERSION}"

log() { printf 'compare-rollouts: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCRATCH=""
cleanup() { if [ -n "$SCRATCH" ]; then rm -rf "$SCRATCH"; fi; }
trap cleanup EXIT

# build_peer builds kubectl-argo-rollouts into $PEER_DIR unless it is there.
build_peer() {
	if [ -n "${ROLLOUTS_LINT:-}" ]; then
		[ -x "$ROLLOUTS_LINT" ] || die "ROLLOUTS_LINT=$ROLLOUTS_LINT is not executable"
		echo "$ROLLOUTS_LINT"
		return
	fi
	if [ -x "$PEER_DIR/kubectl-argo-rollouts" ]; then
		echo "$PEER_DIR/kubectl-argo-rollouts"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH"
	mkdir -p "$PEER_DIR"
	# Serialise concurrent runs on the same cache directory.
	if command -v flock >/dev/null; then
		exec 9>"$PEER_DIR/.lock"
		flock 9
		if [ -x "$PEER_DIR/kubectl-argo-rollouts" ]; then
			echo "$PEER_DIR/kubectl-argo-rollouts"
			return
		fi
	fi
	local start gomod
	start=$(date +%s)
	export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod
	SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gate-rollouts-peer.XXXXXX")"
	gomod="$(cd "$SCRATCH" && go mod download -json "github.com/argoproj/argo-rollouts@${ROLLOUTS_VERSION}" |
		sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
	[ -f "$gomod" ] || die "download argo-rollouts@${ROLLOUTS_VERSION}: no go.mod found"
	{
		printf 'module gate.local/peers/kubectl-argo-rollouts\n\ngo %s\n\n' "$(go env GOVERSION | sed 's/^go//')"
		printf 'require github.com/argoproj/argo-rollouts %s\n\n' "$ROLLOUTS_VERSION"
		sed -n '/^replace (/,/^)/p' "$gomod"
	} >"$SCRATCH/go.mod"
	cat >"$SCRATCH/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/argoproj/argo-rollouts/cmd/kubectl-argo-rollouts"
GO
	log "go mod tidy (downloads dependencies)"
	(cd "$SCRATCH" && go mod tidy) >&2 || die "tidy scratch module for argo-rollouts"
	log "go build kubectl-argo-rollouts ${ROLLOUTS_VERSION} (cold: 10-30 min)"
	(cd "$SCRATCH" && go build -o "$SCRATCH/kubectl-argo-rollouts" \
		-ldflags "-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=${ROLLOUTS_VERSION#v}" \
		github.com/argoproj/argo-rollouts/cmd/kubectl-argo-rollouts) >&2 ||
		die "build kubectl-argo-rollouts ${ROLLOUTS_VERSION}"
	mv -f "$SCRATCH/kubectl-argo-rollouts" "$PEER_DIR/kubectl-argo-rollouts.tmp"
	mv -f "$PEER_DIR/kubectl-argo-rollouts.tmp" "$PEER_DIR/kubectl-argo-rollouts"
	log "built in $(($(date +%s) - start)) s"
	echo "$PEER_DIR/kubectl-argo-rollouts"
}

# companions prints the corpus files checked together with $1 (relative to
# the corpus): what a render of that example holds. The same table as
# internal/rules/rollouts_corpus_test.go, plus the getting-started folder.
companions() {
	local rel="$1" dir
	dir="$(dirname "$rel")"
	case "$dir" in
	examples)
		printf '%s\n' examples/analysis-templates.yaml examples/cluster-analysis-templates.yaml ;;
	examples/ambassador | examples/apisix | examples/appmesh | docs/getting-started/basic)
		find "$dir" -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.yml' \) | sort ;;
	esac | grep -vxF "$rel" || true
}

# lint_cell runs the peer on one file: "ok" or its messages, one per line
# (validation errors; else the error that stopped it, e.g. a decode error).
lint_cell() {
	local out msgs
	if out="$("$PEER" lint -f "$1" 2>&1)"; then
		echo "ok"
		return
	fi
	msgs="$(printf '%s\n' "$out" | grep -v '^Error: ' | sed '/^$/d' || true)"
	if [ -z "$msgs" ]; then
		msgs="$(printf '%s\n' "$out" | sed -n 's/^Error: /error: /p' | head -n1)"
	fi
	printf '%s\n' "$msgs"
}

# gate_cell runs kubectl gate check on one file with its companions and
# prints the rollout findings about that file's objects as rule@field.
gate_cell() {
	local rel="$1" args=(-f "$1") c out code=0
	while read -r c; do
		[ -n "$c" ] && args+=(-f "$c")
	done < <(companions "$rel")
	out="$("$GATE" check -o json "${args[@]}" 2>&1)" || code=$?
	if [ "$code" -ge 2 ]; then
		echo "no verdict (exit $code): $(printf '%s' "$out" | tail -n1)"
		return
	fi
	printf '%s' "$out" | jq -r --arg f "$rel" '
		[.results[] | select(.rule | startswith("rollout-")) | select((.file.path // "") == $f)
		 | "\(.rule)@\(.field.path // "-")"] | if length == 0 then "ok" else .[] end'
}

# service_pair reads findings on stdin and says whether any is about the
# Service pair: lint's Service messages (not Ingress or VirtualService), or
# our services and selector rules.
service_pair() {
	if grep -iE 'service' | grep -viE 'ingress|virtualservice' | grep -qE '.'; then
		echo yes
	else
		echo no
	fi
}

compare() {
	PEER="$(build_peer | tail -n1)"
	GATE="${GATE_BIN:-$REPO/bin}/kubectl-gate"
	[ -x "$GATE" ] || die "$GATE not found: run make build first"
	command -v jq >/dev/null || die "jq is not on PATH"
	local corpus="${GATE_CORPUS:-$REPO/testdata/corpus}/argoproj__argo-rollouts"
	[ -d "$corpus" ] || die "corpus not found at $corpus"
	cd "$corpus"
	local files f lint gate lp gp missed=0 n=0
	files="$(grep -rlE '^kind: Rollout|"kind": *"Rollout"' --include='*.yaml' --include='*.yml' --include='*.json' . | sed 's|^\./||' | sort)"
	printf '%-78s | %-3s %-3s | %s\n' "FILE" "LNT" "GTE" "FINDINGS (lint: its messages; gate: rule@field)"
	for f in $files; do
		n=$((n + 1))
		lint="$(lint_cell "$f")"
		gate="$(gate_cell "$f")"
		lp="$(printf '%s\n' "$lint" | service_pair)"
		gp="$(printf '%s\n' "$gate" | { grep -E '^rollout-(canary-services|bluegreen-services|service-selector)@' || true; } | service_pair)"
		local mark=""
		if [ "$lp" = yes ] && [ "$gp" = no ]; then
			mark="  <== MISSED Service-pair problem"
			missed=$((missed + 1))
		fi
		printf '%-78s | %-3s %-3s |%s\n' "$f" "$lp" "$gp" "$mark"
		printf '%s\n' "$lint" | sed 's/^/    lint: /'
		printf '%s\n' "$gate" | sed 's/^/    gate: /'
	done
	printf '\n%d Rollout files; LNT/GTE = a Service-pair problem reported by lint / by kubectl-gate.\n' "$n"
	if [ "$missed" -gt 0 ]; then
		die "$missed Service-pair problem(s) lint reports and kubectl-gate does not"
	fi
	echo "kubectl-gate reports every Service-pair problem lint reports."
}

case "${1:-compare}" in
build) build_peer ;;
compare) compare ;;
*) die "unknown command ${1} (want build or compare)" ;;
esac
