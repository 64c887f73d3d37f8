#!/usr/bin/env bash
# .ci/schema-agreement.sh — `make schema-agreement` (issue 11): where the gate,
# kubeconform -strict and kubectl-validate agree with the API server.
#
#   1. TestAgreementWithAPIServer (internal/schema) judges every corpus
#      object, the CRD-backed hand-written objects and the generated mutants
#      with `kubectl apply --dry-run=server --validate=strict` on a real
#      kube-apiserver, and with GATE_AGREEMENT_DIR writes the set: one object
#      per file, the CRDs the cluster had, both verdicts (verdicts.tsv).
#   2. kubeconform -strict on exactly those files, offline: JSON schemas made
#      by its own scripts/openapi2jsonschema.py from the Kubernetes OpenAPI v3
#      the gate embeds (K8S_SCHEMA_VERSION) and from the same CRDs, converted
#      as `make bench` converts them (.ci/bench/schema-peers.sh).
#   3. kubectl-validate on the same files, offline: --local-schemas (the same
#      OpenAPI v3) and --local-crds (the same CRDs). v0.0.4 loads its built-in
#      schemas of KUBECTL_VALIDATE_K8S (1.30, its newest) beside them and
#      fails outright for a version it lacks when GitHub is unreachable; the
#      local 1.37 documents take precedence group-version by group-version.
#   4. .ci/bench/schema-agreement.py tabulates: agree, disagree both ways, no
#      verdict (the tool could not judge the object offline), and the classes.
#   5. Empty input (not an object of the set): each tool's exit code on an
#      empty file, next to kubectl apply's (recorded by the test).
#
# Needs: GATE_CLUSTER_ASSETS (kube-apiserver + etcd, `make cluster-assets`),
# kubectl on PATH, KUBECONFORM, KUBECTL_VALIDATE (a missing or unbuildable
# one is a column of "no verdict", said so), GATE (bin/kubectl-gate), python3
# with PyYAML, jq, unzip. Output: AGREEMENT_OUT (.cache/schema-agreement).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

GO=${GO:-go}
GATE=${GATE:-$ROOT/bin/kubectl-gate}
KUBECONFORM=${KUBECONFORM:-}
KUBECONFORM_VERSION=${KUBECONFORM_VERSION:-v0.8.0}
KUBECTL_VALIDATE=${KUBECTL_VALIDATE:-}
KUBECTL_VALIDATE_VERSION=${KUBECTL_VALIDATE_VERSION:-?}
KUBECTL_VALIDATE_K8S=${KUBECTL_VALIDATE_K8S:-1.30}
K8S_SCHEMA_VERSION=${K8S_SCHEMA_VERSION:-v1.37.2}
OUT=${AGREEMENT_OUT:-$ROOT/.cache/schema-agreement}
LIMIT=${AGREEMENT_TIMEOUT:-1800}

die() { echo "schema-agreement: $*" >&2; exit 1; }
log() { echo "schema-agreement: [$(date +%T)] $*" >&2; }

for t in jq unzip python3 timeout kubectl; do
	command -v "$t" >/dev/null || die "$t is missing"
done
[[ -n ${GATE_CLUSTER_ASSETS:-} && -x $GATE_CLUSTER_ASSETS/kube-apiserver && -x $GATE_CLUSTER_ASSETS/etcd ]] ||
	die "no kube-apiserver and etcd in GATE_CLUSTER_ASSETS=${GATE_CLUSTER_ASSETS:-} (make cluster-assets builds them)"
[[ -x $GATE ]] || die "no kubectl-gate at $GATE (run through \`make schema-agreement\`, which builds it)"

mkdir -p "$OUT"
W=$OUT/work
rm -rf "$W" && mkdir -p "$W"

log "1. the agreement test against kube-apiserver ($GATE_CLUSTER_ASSETS), set written to $OUT"
GATE_CLUSTER_REQUIRED=1 GATE_AGREEMENT_DIR=$OUT GATE_AGREEMENT_OUT=$OUT/gate-table.md \
	timeout -k 10 "$LIMIT" "$GO" test -count=1 -run 'TestAgreementWithAPIServer$' -timeout "${LIMIT}s" -v ./internal/schema/ \
	>"$OUT/test.log" 2>&1 || {
	tail -n 30 "$OUT/test.log" >&2
	grep -q 'agreement set: ' "$OUT/test.log" || die "the agreement test wrote no set (log: $OUT/test.log)"
	log "WARNING: the agreement test failed (the gate disagrees somewhere: see the table); the set was written, going on"
}
grep -q -- '--- SKIP' "$OUT/test.log" && die "the agreement test was skipped: $(grep -A2 -- '--- SKIP' "$OUT/test.log" | tail -n 1)"
[[ -s $OUT/verdicts.tsv ]] || die "no $OUT/verdicts.tsv"

# shellcheck source=bench/schema-peers.sh
source .ci/bench/schema-peers.sh
log "2. schemas: Kubernetes $K8S_SCHEMA_VERSION OpenAPI v3, $(ls "$OUT/crds" | wc -l) CRD documents"
why=$(k8s_openapi "$W/openapi-v3") || die "$why"

KC_JSON= KV_JSON= NOTES=()
if [[ -n $KUBECONFORM && -x $KUBECONFORM ]]; then
	if why=$(kubeconform_schemas "$W/openapi-v3" "$OUT/crds" "$W/kc-schemas"); then
		log "2. kubeconform $KUBECONFORM_VERSION -strict"
		rc=0
		timeout -k 10 "$LIMIT" "$KUBECONFORM" -strict -verbose -output json -n 2 \
			-schema-location "$W/kc-schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$OUT/objects" \
			>"$OUT/kubeconform.json" 2>"$OUT/kubeconform.err" || rc=$?
		if [[ $rc == 0 || $rc == 1 ]] && jq -e .resources "$OUT/kubeconform.json" >/dev/null 2>&1; then
			KC_JSON=$OUT/kubeconform.json
		else
			NOTES+=("kubeconform: exit $rc, no report ($(tail -n 1 "$OUT/kubeconform.err")): every object no verdict")
		fi
	else
		NOTES+=("kubeconform: schemas not made ($why): every object no verdict")
	fi
else
	NOTES+=("kubeconform: not installed (KUBECONFORM=$KUBECONFORM): every object no verdict")
fi

if [[ -n $KUBECTL_VALIDATE && -x $KUBECTL_VALIDATE ]]; then
	if why=$(kubectl_validate_schemas "$W/openapi-v3" "$W/kv-schemas"); then
		log "3. kubectl-validate --version $KUBECTL_VALIDATE_K8S --local-schemas ($K8S_SCHEMA_VERSION) --local-crds"
		rc=0
		# KUBECONFIG points nowhere: the tool must not consult a cluster.
		KUBECONFIG=$W/no-kubeconfig timeout -k 10 "$LIMIT" "$KUBECTL_VALIDATE" --version "$KUBECTL_VALIDATE_K8S" \
			--local-schemas "$W/kv-schemas" --local-crds "$OUT/crds" -o json "$OUT/objects" \
			>"$OUT/kubectl-validate.json" 2>"$OUT/kubectl-validate.err" || rc=$?
		if [[ $rc == 0 || $rc == 1 ]] && jq -e 'type == "object"' "$OUT/kubectl-validate.json" >/dev/null 2>&1; then
			KV_JSON=$OUT/kubectl-validate.json
		else
			NOTES+=("kubectl-validate: exit $rc, no report ($(head -n 3 "$OUT/kubectl-validate.err" | tr '\n' ' ')): every object no verdict")
		fi
	else
		NOTES+=("kubectl-validate: schemas not made ($why): every object no verdict")
	fi
else
	NOTES+=("kubectl-validate: not installed (KUBECTL_VALIDATE=$KUBECTL_VALIDATE): every object no verdict")
fi

log "4. tabulating"
: >"$W/empty.yaml"
edge() { # NAME CMD…: the exit code of CMD on an empty file
	local rc=0
	KUBECONFIG=$W/no-kubeconfig timeout 120 "$@" "$W/empty.yaml" >"$W/empty.out" 2>&1 || rc=$?
	printf '  %-22s exit %s  %s\n' "$(basename "$1")" "$rc" "$(head -c 120 "$W/empty.out" | tr '\n' ' ' | sed 's/\x1b\[[0-9;]*m//g')"
}
{
	echo "=== make schema-agreement: $(git describe --tags --always --dirty 2>/dev/null || echo '?'), $(date -u +%FT%TZ)"
	echo "=== API server: kube-apiserver in $GATE_CLUSTER_ASSETS, kubectl apply --dry-run=server --validate=strict"
	echo "=== schemas: Kubernetes $K8S_SCHEMA_VERSION OpenAPI v3 and $(ls "$OUT/crds" | wc -l) CRDs for all; kubeconform $KUBECONFORM_VERSION, kubectl-validate $KUBECTL_VALIDATE_VERSION"
	echo "=== kubeconform: -strict, schemas by its openapi2jsonschema.py; kubectl-validate: --version $KUBECTL_VALIDATE_K8S (its newest built-in set; a version it lacks fails offline) with the local $K8S_SCHEMA_VERSION OpenAPI taking precedence"
	echo
	python3 .ci/bench/schema-agreement.py "$OUT" "$KC_JSON" "$KV_JSON"
	echo
	echo "empty input (an empty file; not in the set above)"
	printf '  %-22s %s\n' "kubectl apply" "$(cat "$OUT/empty-input.txt" 2>/dev/null || echo '(not recorded)')"
	edge "$GATE" check -f
	[[ -n $KUBECONFORM && -x $KUBECONFORM ]] && edge "$KUBECONFORM" -strict -summary
	[[ -n $KUBECTL_VALIDATE && -x $KUBECTL_VALIDATE ]] && edge "$KUBECTL_VALIDATE" --version "$KUBECTL_VALIDATE_K8S" --local-schemas "$W/kv-schemas"
	if ((${#NOTES[@]})); then
		echo
		echo "notes"
		printf '  %s\n' "${NOTES[@]}"
	fi
} | tee "$OUT/summary.txt"
echo "schema-agreement: summary in $OUT/summary.txt, every disagreement in $OUT/disagreements.tsv" >&2
