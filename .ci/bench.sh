#!/usr/bin/env bash
# .ci/bench.sh — `make bench`: kubectl-gate next to its peers, one bounded run.
#
#   1. check: `kubectl-gate check -f` on a generated 10,000-object render (3
#      containers per workload) vs `conftest test` with the same rule in Rego
#      (.ci/bench/policy), unpinned (both fail) and pinned (both pass); and
#      kubeconform (schema validation: a different job, the "read and walk 10k
#      objects" reference). Median of BENCH_RUNS runs: wall, CPU, peak RSS.
#   2. pin: 400 unique tags used ~4,000 times against examples/registry
#      (loopback, BENCH_DELAY per manifest request): (a) `kubectl-gate pin`,
#      (b) a sequential `crane digest` loop over every reference (the
#      k8s-digester model; the first BENCH_CRANE_SAMPLE references, then
#      extrapolated), (c) the same loop over the unique references.
#   3. verify: `check --digest verify` of a pinned 10k render against the registry.
#   4. the Go benchmarks (BenchmarkCheck10k, BenchmarkResolve400x4000).
#
# Run by `make bench`, which builds bin/kubectl-gate and installs the peers and
# passes them in GATE, CRANE, CONFTEST, KUBECONFORM. The registry runs on
# 127.0.0.1 only and is killed on exit; every command has a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

GO=${GO:-go}
GATE=${GATE:-$ROOT/bin/kubectl-gate}
CRANE=${CRANE:-}
CONFTEST=${CONFTEST:-}
KUBECONFORM=${KUBECONFORM:-}
K8S_SCHEMA_VERSION=${K8S_SCHEMA_VERSION:-v1.37.2}
ROLLOUTS_SCHEMA_VERSION=${ROLLOUTS_SCHEMA_VERSION:-v1.10.1}
RUNS=${BENCH_RUNS:-3}
JOBS=${BENCH_JOBS:-8}
DELAY=${BENCH_DELAY:-20ms}
CRANE_SAMPLE=${BENCH_CRANE_SAMPLE:-1000}
SPLIT=${BENCH_SPLIT:-1}
GOBENCH=${BENCH_GO:-1}
LIMIT=${BENCH_CMD_TIMEOUT:-900}
OUT=${BENCH_OUT:-$ROOT/.cache/bench/summary.txt}

CHECK_N=${BENCH_CHECK_N:-10000}   # objects in the check render (smaller only to try the script)
NK=$(awk -v n="$CHECK_N" 'BEGIN { if (n % 1000 == 0) print n / 1000 "k"; else print n }')
IMAGES=400        # unique image references
# The pin render: workloads (6 kinds of 8) hold 3 references each, so 1,334
# workloads = 1,778 objects give 4,002 references over the 400 tags (~10 each).
PIN_N=1778
PIN_REFS_MIN=4000

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "bench: [$(date +%T)] $*" >&2; }

# ---- prerequisites ---------------------------------------------------------
for t in /usr/bin/time jq curl timeout awk; do
	command -v "$t" >/dev/null || die "$t is missing (Debian: apt-get install -y time jq curl coreutils gawk)"
done
[[ -x $GATE ]] || die "no kubectl-gate at $GATE (run through \`make bench\`, which builds it)"
[[ -n $CRANE && -x $CRANE ]] || die "crane not found (CRANE=$CRANE); run through \`make bench\`"
[[ -n $CONFTEST && -x $CONFTEST ]] || die "conftest not found (CONFTEST=$CONFTEST); run through \`make bench\`"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$RUNS: want a positive integer"
[[ $CRANE_SAMPLE =~ ^[0-9]+$ ]] || die "BENCH_CRANE_SAMPLE=$CRANE_SAMPLE: want a number (0 = all)"
DELAY_MS=$(awk -v d="$DELAY" 'BEGIN { if (d ~ /ms$/) print d+0; else if (d ~ /s$/) print (d+0)*1000; else print -1 }')
[[ $DELAY_MS != -1 ]] || die "BENCH_DELAY=$DELAY: want e.g. 20ms"

W=$(mktemp -d "${TMPDIR:-/tmp}/kubectl-gate-bench.XXXXXX")
REG_PID=
CHILD=
cleanup() {
	local rc=$?
	if [[ -n $CHILD ]]; then # a measured command: timeout leads its own process group
		kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	if [[ -n $REG_PID ]] && kill -0 "$REG_PID" 2>/dev/null; then
		kill "$REG_PID" 2>/dev/null || true
		wait "$REG_PID" 2>/dev/null || true
	fi
	if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "bench: work directory kept: $W" >&2; else rm -rf "$W"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "work directory $W; $(nproc) cores; load average $LOAD_START"
[[ $(awk '{print ($1 > 2*'"$(nproc)"')}' /proc/loadavg) == 1 ]] &&
	log "WARNING: the machine is busy (load $LOAD_START on $(nproc) cores): wall times will be inflated; CPU times are the steadier figure"

# Measure a frozen copy: other jobs (tests) may rebuild bin/ during the run.
cp "$GATE" "$W/kubectl-gate"
GATE=$W/kubectl-gate
GATE_VERSION=$("$GATE" version 2>/dev/null | head -n 1 || echo '?')
GIT_DESC=$(git describe --tags --always --dirty 2>/dev/null || echo '?')

log "building benchgen and the test registry"
"$GO" build -o "$W/benchgen" ./internal/benchgen/cmd/benchgen
"$GO" build -o "$W/registry" ./examples/registry

# ---- measuring -------------------------------------------------------------
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
fmt_s() { awk -v v="$1" 'BEGIN { if (v == "" || v == "-") print "-"; else if (v < 10) printf "%.2f s", v; else printf "%.1f s", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "" || a == "-") print "-"; else if (a / b >= 10) printf "%.0f×", a / b; else printf "%.2f×", a / b }'; }

HOST=
stats() { # → "requests manifestRequests"
	curl -fsS --max-time 10 "http://$HOST/_stats" | jq -r '"\(.requests) \(.manifestRequests)"' ||
		die "cannot read http://$HOST/_stats from the test registry"
}

# guarded OUT ERR CMD… — CMD under a timeout, in the background so that an
# interrupt runs the trap at once (cleanup stops the whole process group).
guarded() {
	local out=$1 err=$2 rc=0; shift 2
	timeout -k 10 "$LIMIT" "$@" >"$out" 2>"$err" </dev/null &
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=
	return "$rc"
}

# run NAME EXPECT_RC CMD… — runs CMD RUNS times under /usr/bin/time and a
# timeout; stdout to $W/NAME.out, stderr to $W/NAME.err. Sets M_WALL, M_CPU
# (user+sys, s), M_RSS (MB), and with the registry up M_REQ / M_MREQ (per run;
# "a/b/c" when the runs disagree).
run() { run_n "$RUNS" "$@"; }
run_n() {
	local n=$1 name=$2 want=$3; shift 3
	local walls=() cpus=() rsss=() reqs=() mreqs=() i rc before after
	for ((i = 1; i <= n; i++)); do
		[[ -n $HOST ]] && before=$(stats)
		rc=0
		guarded "$W/$name.out" "$W/$name.err" /usr/bin/time -o "$W/$name.time" -f '%e %U %S %M' "$@" || rc=$?
		if [[ $rc == 124 || $rc == 137 ]]; then
			die "$name: timed out after ${LIMIT}s (BENCH_CMD_TIMEOUT): $*"
		fi
		if [[ $rc != "$want" ]]; then
			echo "bench: $name: exit $rc, expected $want: $*" >&2
			echo "--- stderr (tail) ---" >&2; tail -n 15 "$W/$name.err" >&2
			echo "--- stdout (tail) ---" >&2; tail -n 5 "$W/$name.out" >&2
			exit 1
		fi
		read -r wall usr sys rss < <(tail -n 1 "$W/$name.time")
		walls+=("$wall"); cpus+=("$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')"); rsss+=("$rss")
		if [[ -n $HOST ]]; then
			after=$(stats)
			reqs+=("$(($(cut -d' ' -f1 <<<"$after") - $(cut -d' ' -f1 <<<"$before")))")
			mreqs+=("$(($(cut -d' ' -f2 <<<"$after") - $(cut -d' ' -f2 <<<"$before")))")
		fi
		log "  $name run $i/$n: ${wall}s wall, $((rss / 1024)) MB${HOST:+, ${reqs[-1]} requests (${mreqs[-1]} manifest)}"
	done
	M_WALL=$(printf '%s\n' "${walls[@]}" | median)
	M_CPU=$(printf '%s\n' "${cpus[@]}" | median)
	M_RSS=$(($(printf '%s\n' "${rsss[@]}" | median) / 1024))
	M_RC=$rc
	M_REQ=-; M_MREQ=-
	if [[ -n $HOST ]]; then
		M_REQ=$(printf '%s\n' "${reqs[@]}" | sort -u | paste -sd/)
		M_MREQ=$(printf '%s\n' "${mreqs[@]}" | sort -u | paste -sd/)
	fi
}

# The summary table: one row per measurement.
ROWS=()
row() { # label wall cpu rss requests exit note
	ROWS+=("$(printf '%-44s %10s %10s %8s %14s %4s  %s' "$1" "$(fmt_s "$2")" "$(fmt_s "$3")" "$4" "$5" "$6" "$7")")
}
NOTES=()
GOALS=()
goal() { # text ok(1/0)
	if [[ $2 == 1 ]]; then GOALS+=("  met   $1"); else GOALS+=("  MISSED $1"); fi
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0) ? 1 : 0 }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 <= b + 0) ? 1 : 0 }'; }

# ---- 1. check: kubectl-gate vs conftest (vs kubeconform) -------------------
log "1. check: generating the ${CHECK_N}-object renders"
"$W/benchgen" -n "$CHECK_N" -images "$IMAGES" -registry ghcr.io >"$W/render.yaml"
"$W/benchgen" -n "$CHECK_N" -images "$IMAGES" -registry ghcr.io -pinned >"$W/render-pinned.yaml"
CHECK_REFS=$("$W/benchgen" -n "$CHECK_N" -images "$IMAGES" -registry ghcr.io -refs | wc -l)
RENDER_MB=$(awk -v b="$(stat -c %s "$W/render.yaml")" 'BEGIN { printf "%.1f", b / 1048576 }')
NOTES+=("render: $CHECK_N objects, $CHECK_REFS image references ($IMAGES unique), $RENDER_MB MB (pinned: $(awk -v b="$(stat -c %s "$W/render-pinned.yaml")" 'BEGIN { printf "%.1f", b / 1048576 }') MB)")

# gate: the text report's last line is "FAIL: N resource(s), E error(s), W warning(s)".
gate_errors() { grep -oE '[0-9]+ error\(s\)' "$W/$1.out" | tail -n 1 | grep -oE '^[0-9]+' || echo "?"; }
# conftest: "T tests, P passed, W warnings, F failures, E exceptions".
conftest_failures() { grep -oE '[0-9]+ failures?' "$W/$1.out" | tail -n 1 | grep -oE '^[0-9]+' || echo "?"; }

log "1. kubectl-gate check -f (unpinned: every image fails image-digest)"
run gate-check 1 "$GATE" check -f "$W/render.yaml"
G1=("$M_WALL" "$M_CPU" "$M_RSS"); G1_ERR=$(gate_errors gate-check)
row "gate check $NK, unpinned" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "$G1_ERR findings"

log "1. conftest test (unpinned)"
run conftest 1 "$CONFTEST" test --no-color --policy .ci/bench/policy "$W/render.yaml"
C1=("$M_WALL" "$M_CPU" "$M_RSS"); C1_FAIL=$(conftest_failures conftest)
row "conftest test $NK, unpinned" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "$C1_FAIL failures"

log "1. kubectl-gate check -f (pinned: passes)"
run gate-check-pinned 0 "$GATE" check -f "$W/render-pinned.yaml"
G2=("$M_WALL" "$M_CPU" "$M_RSS")
row "gate check $NK, pinned" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "pass"

log "1. conftest test (pinned: passes)"
run conftest-pinned 0 "$CONFTEST" test --no-color --policy .ci/bench/policy "$W/render-pinned.yaml"
C2=("$M_WALL" "$M_CPU" "$M_RSS")
row "conftest test $NK, pinned" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "$(conftest_failures conftest-pinned) failures"

if [[ $G1_ERR == "$C1_FAIL" && $G1_ERR == "$CHECK_REFS" ]]; then
	NOTES+=("same verdicts: gate and conftest both report all $G1_ERR unpinned references, and pass the pinned render")
else
	NOTES+=("WARNING: not the same verdicts: gate $G1_ERR findings, conftest $C1_FAIL failures, $CHECK_REFS references")
fi

if [[ $SPLIT == 1 ]]; then
	# Where the time goes: the same pinned check with the Argo Rollouts rules
	# off (1,250 of the 10k objects are Rollouts).
	mapfile -t ROLLOUT_RULES < <("$GATE" rules | awk '$1 ~ /^rollout-/ { print $1 }')
	if ((${#ROLLOUT_RULES[@]})); then
		if printf '%s\n' "${ROLLOUT_RULES[@]}" | grep -qx rollout-canary-services; then
			log "1. split: --rule rollout-canary-services=off"
			run gate-check-nocs 0 "$GATE" check -f "$W/render-pinned.yaml" --rule rollout-canary-services=off
			row "  same, rollout-canary-services=off" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" ""
		fi
		off=()
		for r in "${ROLLOUT_RULES[@]}"; do off+=(--rule "$r=off"); done
		log "1. split: all ${#ROLLOUT_RULES[@]} rollout-* rules off"
		run gate-check-norollouts 0 "$GATE" check -f "$W/render-pinned.yaml" "${off[@]}"
		row "  same, all ${#ROLLOUT_RULES[@]} rollout-* rules off" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" ""
	fi
fi

# kubeconform: schemas from the Kubernetes swagger.json and the Argo Rollouts
# CRD schema, both module zips from the module proxy; skipped (with the
# reason) when they cannot be had.
kubeconform_schemas() {
	local dir=$W/schemas k8s rollouts
	mkdir -p "$dir"
	k8s=$(cd "$W" && "$GO" mod download -json "k8s.io/kubernetes@$K8S_SCHEMA_VERSION" 2>"$W/modk8s.err" | jq -r '.Dir // empty') || true
	[[ -n $k8s && -f $k8s/api/openapi-spec/swagger.json ]] || { echo "k8s.io/kubernetes@$K8S_SCHEMA_VERSION not available: $(tail -n 1 "$W/modk8s.err")"; return 1; }
	rollouts=$(cd "$W" && "$GO" mod download -json "github.com/argoproj/argo-rollouts@$ROLLOUTS_SCHEMA_VERSION" 2>"$W/modro.err" | jq -r '.Dir // empty') || true
	[[ -n $rollouts && -f $rollouts/docs/features/kustomize/rollout_cr_schema.json ]] || { echo "argo-rollouts@$ROLLOUTS_SCHEMA_VERSION not available: $(tail -n 1 "$W/modro.err")"; return 1; }
	# Like openapi2jsonschema: IntOrString and Quantity accept both types.
	jq '{definitions: (.definitions
		| .["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {oneOf: [{type: "string"}, {type: "integer"}]}
		| .["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {oneOf: [{type: "string"}, {type: "number"}]})}' \
		"$k8s/api/openapi-spec/swagger.json" >"$dir/_definitions.json" || { echo "jq failed on $k8s/api/openapi-spec/swagger.json"; return 1; }
	# One file per kind, named as kubeconform looks them up: kind[-group]-version.json.
	# shellcheck disable=SC2016 # a JSON "$ref", not a shell variable
	jq -r '.definitions | to_entries[] | .key as $k | (.value["x-kubernetes-group-version-kind"] // [])[]
		| "\(.kind | ascii_downcase)\(if .group == "" then "" else "-" + (.group | split(".")[0] | ascii_downcase) end)-\(.version).json\t\($k)"' \
		"$k8s/api/openapi-spec/swagger.json" |
		while IFS=$'\t' read -r f def; do printf '{"$ref":"_definitions.json#/definitions/%s"}\n' "$def" >"$dir/$f"; done
	jq '.definitions["io.argoproj.v1alpha1.Rollout"]' "$rollouts/docs/features/kustomize/rollout_cr_schema.json" >"$dir/rollout-argoproj-v1alpha1.json" ||
		{ echo "jq failed on the Argo Rollouts schema"; return 1; }
	[[ -s $dir/deployment-apps-v1.json && -s $dir/service-v1.json && $(jq -r type "$dir/rollout-argoproj-v1alpha1.json") == object ]] ||
		{ echo "schema generation produced no deployment/service/rollout schema"; return 1; }
	# The schemas must bite: a Deployment with a string containerPort fails.
	printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: i, ports: [{containerPort: eighty}]}]\n' >"$W/bad.yaml"
	if "$KUBECONFORM" -schema-location "$dir/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$W/bad.yaml" >/dev/null 2>&1; then
		echo "the generated schemas do not reject a bad Deployment"; return 1
	fi
}
if [[ -n $KUBECONFORM && -x $KUBECONFORM ]]; then
	log "1. kubeconform: generating schemas (Kubernetes $K8S_SCHEMA_VERSION swagger, Argo Rollouts $ROLLOUTS_SCHEMA_VERSION CRD)"
	if why=$(kubeconform_schemas); then
		run kubeconform 0 "$KUBECONFORM" -summary -schema-location "$W/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$W/render-pinned.yaml"
		K=("$M_WALL" "$M_CPU" "$M_RSS")
		ksum=$(grep -oE 'Valid: [0-9]+, Invalid: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+' "$W/kubeconform.out" || echo "?")
		row "kubeconform $NK, pinned (schemas only)" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "$ksum"
		[[ $ksum == "Valid: $CHECK_N, Invalid: 0, Errors: 0, Skipped: 0" ]] ||
			NOTES+=("WARNING: kubeconform did not validate every object: $ksum")
		NOTES+=("kubeconform validates schemas (a different job, no image rule): the reference for reading and walking the same $CHECK_N objects")
	else
		NOTES+=("kubeconform skipped: $why")
	fi
else
	NOTES+=("kubeconform skipped: not installed (KUBECONFORM=$KUBECONFORM)")
fi

# ---- 2. pin against the registry --------------------------------------------
log "2. pin: starting examples/registry (-seed bench:$IMAGES -delay $DELAY, 127.0.0.1)"
"$W/registry" -addr 127.0.0.1:0 -seed "bench:$IMAGES" -delay "$DELAY" -addr-file "$W/registry.addr" >"$W/registry.log" 2>&1 &
REG_PID=$!
for ((i = 0; i < 1200; i++)); do
	if [[ -s $W/registry.addr ]]; then
		read -r HOST <"$W/registry.addr" || true
		[[ $HOST =~ ^127\.0\.0\.1:[0-9]+$ ]] && break
		HOST=
	fi
	kill -0 "$REG_PID" 2>/dev/null || die "the test registry exited: $(tail -n 5 "$W/registry.log")"
	sleep 0.1
done
[[ -n $HOST ]] || die "the test registry did not come up within 120 s: $(tail -n 5 "$W/registry.log")"
log "2. registry at $HOST"

"$W/benchgen" -n "$PIN_N" -images "$IMAGES" -registry "$HOST" >"$W/pin.yaml"
"$W/benchgen" -n "$PIN_N" -images "$IMAGES" -registry "$HOST" -refs >"$W/refs.txt"
sort -u "$W/refs.txt" >"$W/refs-unique.txt"
NREFS=$(wc -l <"$W/refs.txt")
NUNIQ=$(wc -l <"$W/refs-unique.txt")
USES=$(sort "$W/refs.txt" | uniq -c | awk '{ print $1 }' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }')
((NREFS >= PIN_REFS_MIN && NUNIQ == IMAGES)) || die "pin render: $NREFS references, $NUNIQ unique; want ≥ $PIN_REFS_MIN and $IMAGES"
NOTES+=("pin render: $PIN_N objects, $NREFS image references, $NUNIQ unique (each used $USES times)")

log "2a. kubectl-gate pin -f ($NREFS references, --jobs $JOBS)"
run gate-pin 0 "$GATE" pin -f "$W/pin.yaml" --insecure-registry "$HOST" --jobs "$JOBS"
PA=("$M_WALL" "$M_CPU" "$M_RSS"); PA_REQ=$M_REQ; PA_MREQ=$M_MREQ
row "(a) gate pin, $NREFS refs, jobs $JOBS" "$M_WALL" "$M_CPU" "$M_RSS MB" "$M_MREQ ($M_REQ)" "$M_RC" ""

# Where (a)'s time goes besides the registry: the same check on its output.
cp "$W/gate-pin.out" "$W/pin-pinned.yaml"
run gate-check-pinout 0 "$GATE" check -f "$W/pin-pinned.yaml"
row "  check of (a)'s output, no registry" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "parse + rules, no pinning"

if ((CRANE_SAMPLE == 0 || CRANE_SAMPLE >= NREFS)); then SAMPLE=$NREFS; else SAMPLE=$CRANE_SAMPLE; fi
head -n "$SAMPLE" "$W/refs.txt" >"$W/refs-sample.txt"
# shellcheck disable=SC2016
LOOP='while read -r ref; do "$0" digest --insecure "$ref" >/dev/null || exit 1; done <"$1"'
log "2b. sequential crane digest over $SAMPLE of $NREFS references (one process per reference)"
run_n 1 crane-all 0 bash -c "$LOOP" "$CRANE" "$W/refs-sample.txt"
PB_WALL=$(awk -v w="$M_WALL" -v n="$NREFS" -v s="$SAMPLE" 'BEGIN { print w * n / s }')
PB_CPU=$(awk -v w="$M_CPU" -v n="$NREFS" -v s="$SAMPLE" 'BEGIN { print w * n / s }')
PB_MREQ=$(awk -v r="$M_MREQ" -v n="$NREFS" -v s="$SAMPLE" 'BEGIN { printf "%.0f", r * n / s }')
PB_REQ=$(awk -v r="$M_REQ" -v n="$NREFS" -v s="$SAMPLE" 'BEGIN { printf "%.0f", r * n / s }')
if ((SAMPLE < NREFS)); then
	row "(b) crane digest loop, first $SAMPLE refs" "$M_WALL" "$M_CPU" - "$M_MREQ ($M_REQ)" "$M_RC" "measured, 1 run"
	row "(b) crane digest loop, all $NREFS refs" "$PB_WALL" "$PB_CPU" - "$PB_MREQ ($PB_REQ)" - "EXTRAPOLATED ×$(awk -v n="$NREFS" -v s="$SAMPLE" 'BEGIN { printf "%.2f", n / s }') from $SAMPLE"
else
	row "(b) crane digest loop, all $NREFS refs" "$PB_WALL" "$PB_CPU" - "$PB_MREQ ($PB_REQ)" "$M_RC" "measured, 1 run"
fi
CRANE_PER_REF=$(awk -v w="$M_WALL" -v s="$SAMPLE" 'BEGIN { printf "%.0f", w * 1000 / s }')

# (c) also records the digests, to check the gate pinned the same ones.
# shellcheck disable=SC2016
LOOPU='while read -r ref; do d=$("$0" digest --insecure "$ref") || exit 1; echo "$ref@$d"; done <"$1"'
log "2c. sequential crane digest over the $NUNIQ unique references"
run_n 1 crane-unique 0 bash -c "$LOOPU" "$CRANE" "$W/refs-unique.txt"
PC=("$M_WALL" "$M_CPU")
row "(c) crane digest loop, $NUNIQ unique refs" "$M_WALL" "$M_CPU" - "$M_MREQ ($M_REQ)" "$M_RC" "measured, 1 run"

pinned_images() { sed -nE 's/^[[:space:]-]*image:[[:space:]]*"?([^"[:space:]]+)"?.*$/\1/p' "$1" | sort -u; }
pinned_images "$W/gate-pin.out" >"$W/gate-digests.txt"
sort -u "$W/crane-unique.out" >"$W/crane-digests.txt"
if cmp -s "$W/gate-digests.txt" "$W/crane-digests.txt"; then
	NOTES+=("gate pin wrote the same digests as crane for all $NUNIQ references")
else
	diff "$W/crane-digests.txt" "$W/gate-digests.txt" | head -n 10 >&2 || true
	die "kubectl-gate pin and crane disagree on the digests (diff above: < crane, > gate)"
fi

# ---- 3. verify on the 10k render --------------------------------------------
log "3. verify: pinning a ${CHECK_N}-object render that points at the registry"
"$W/benchgen" -n "$CHECK_N" -images "$IMAGES" -registry "$HOST" >"$W/render-reg.yaml"
V_UNIQ=$("$W/benchgen" -n "$CHECK_N" -images "$IMAGES" -registry "$HOST" -refs | sort -u | wc -l)
run_n 1 gate-pin-10k 0 "$GATE" pin -f "$W/render-reg.yaml" --insecure-registry "$HOST" --jobs "$JOBS"
cp "$W/gate-pin-10k.out" "$W/render-reg-pinned.yaml"
row "gate pin $NK ($CHECK_REFS refs), jobs $JOBS" "$M_WALL" "$M_CPU" "$M_RSS MB" "$M_MREQ ($M_REQ)" "$M_RC" "1 run; the input of verify"
[[ $(pinned_images "$W/render-reg-pinned.yaml" | grep -vc '@sha256:') == 0 ]] || die "the pinned 10k render still has unpinned images"

log "3. kubectl-gate check --digest verify"
run gate-verify 0 "$GATE" check -f "$W/render-reg-pinned.yaml" --digest verify --insecure-registry "$HOST" --jobs "$JOBS"
V_MREQ=$M_MREQ
row "gate check $NK --digest verify" "$M_WALL" "$M_CPU" "$M_RSS MB" "$M_MREQ ($M_REQ)" "$M_RC" "$(gate_errors gate-verify) errors"

kill "$REG_PID" 2>/dev/null || true
wait "$REG_PID" 2>/dev/null || true
REG_PID=
HOST=

# ---- 3b. ApplicationSets: 100 generated Applications over a checkout ---------
# (issue 13) One ApplicationSet (git directories generator) over 100 kustomize
# directories of 10 objects each, against the same 100 Applications written
# out: the cost of expanding the generator on top of rendering the sources.
log "3b. ApplicationSets: 100 generated Applications over a checkout"
"$GO" build -o "$W/appsetgen" ./internal/benchgen/cmd/appsetgen
"$W/appsetgen" -dir "$W/appset-checkout" -apps 100 -objects 10
APPSET_REPO=https://github.com/example/bench-gitops.git
run gate-appset 0 "$GATE" check -f "$W/appset-checkout/argocd/" --apps-root "$W/appset-checkout" --repo-url "$APPSET_REPO"
AS=("$M_WALL" "$M_CPU" "$M_RSS")
row "gate check ApplicationSet → 100 apps" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "$(grep -oE '[0-9]+ resource' "$W/gate-appset.out" | head -n 1)s"
run gate-appset-written 0 "$GATE" check -f "$W/appset-checkout/written/" --apps-root "$W/appset-checkout" --repo-url "$APPSET_REPO"
row "gate check 100 written Applications" "$M_WALL" "$M_CPU" "$M_RSS MB" - "$M_RC" "the same Applications, written"
NOTES+=("ApplicationSet / written Applications: wall $(ratio "${AS[0]}" "$M_WALL"), cpu $(ratio "${AS[1]}" "$M_CPU"), RSS $(ratio "${AS[2]}" "$M_RSS")")

# ---- 4. Go benchmarks --------------------------------------------------------
GOB=()
if [[ $GOBENCH == 1 ]]; then
	log "4. go test -bench 'Check10k|Resolve400x4000', then ArgoRules (1k, 4k, 20k Applications)"
	if ! guarded "$W/gobench.out" "$W/gobench.err" "$GO" test -run XXX -bench 'Check10k|Resolve400x4000' -benchmem \
		-timeout "${LIMIT}s" ./internal/gate/ ./internal/resolve/; then
		tail -n 20 "$W/gobench.out" "$W/gobench.err" >&2
		die "go test -bench failed"
	fi
	# ArgoRules: 1k, 4k and 20k Applications with rendered sources, once
	# each: linear (20,000 did not finish in 500 s while the rules scanned
	# every render per Application).
	if ! guarded "$W/gobench-apps.out" "$W/gobench.err" "$GO" test -run XXX -bench 'ArgoRules' -benchtime 1x -benchmem \
		-timeout "${LIMIT}s" ./internal/rules/argocd/; then
		tail -n 20 "$W/gobench-apps.out" "$W/gobench.err" >&2
		die "go test -bench ArgoRules failed"
	fi
	cat "$W/gobench-apps.out" >>"$W/gobench.out"
	mapfile -t GOB < <(grep -E '^Benchmark' "$W/gobench.out")
	((${#GOB[@]})) || die "go test -bench printed no Benchmark lines: $(tail -n 5 "$W/gobench.out")"
fi

# ---- summary -------------------------------------------------------------------
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
WALL_GOAL=$(awk -v j="$JOBS" -v n="$NUNIQ" -v d="$DELAY_MS" 'BEGIN { printf "%.3f", 1.3 * int((n + j - 1) / j) * d / 1000 }')
FLOOR=$(awk -v n="$NREFS" -v d="$DELAY_MS" 'BEGIN { print n * d / 1000 }')

goal "gate check $NK < 1 s wall: $(fmt_s "${G1[0]}") unpinned, $(fmt_s "${G2[0]}") pinned (CPU $(fmt_s "${G1[1]}"), $(fmt_s "${G2[1]}"))" "$(($(lt "${G1[0]}" 1) & $(lt "${G2[0]}" 1)))"
goal "gate check $NK < 300 MB: ${G1[2]} MB unpinned, ${G2[2]} MB pinned" "$(($(lt "${G1[2]}" 300) & $(lt "${G2[2]}" 300)))"
NREPOS=$(sed -E 's/:[^:/]+$//' "$W/refs-unique.txt" | sort -u | wc -l)
PA_OTHER=$(awk -v a="$PA_REQ" -v m="$PA_MREQ" 'BEGIN { if (a ~ /^[0-9]+$/ && m ~ /^[0-9]+$/) print a - m; else print "?" }')
goal "pin requests = unique refs (+ ≤ 1 ping/token per repository): $PA_MREQ manifest requests for $NUNIQ unique refs, + $PA_OTHER others for $NREPOS repositories" \
	"$([[ $PA_MREQ == "$NUNIQ" && $PA_OTHER != "?" ]] && ((PA_OTHER <= NREPOS)) && echo 1 || echo 0)"
goal "pin wall ≤ 1.3 × ⌈$NUNIQ/$JOBS⌉ × ${DELAY_MS} ms = ${WALL_GOAL} s: $(fmt_s "${PA[0]}") (CPU $(fmt_s "${PA[1]}"))" "$(le "${PA[0]}" "$WALL_GOAL")"
goal "pin ≥ 20× faster than (b): $(ratio "$PB_WALL" "${PA[0]}")" "$(awk -v b="$PB_WALL" -v a="${PA[0]}" 'BEGIN { print (a > 0 && b / a >= 20) ? 1 : 0 }')"
NOTES+=("verify: $V_MREQ manifest requests for $V_UNIQ unique pinned references ($(awk -v r="$V_MREQ" -v n="$V_UNIQ" 'BEGIN { if (r ~ /^[0-9]+$/) printf "%.1f", r / n; else print "?" }') each: the digest must exist, and image-digest-stale asks the tag)")

{
	echo
	echo "=== make bench: kubectl-gate $GATE_VERSION (tree $GIT_DESC at start), $(date -u +%FT%TZ)"
	echo "=== $(nproc) cores; load average $LOAD_START at start, $LOAD_END at end; medians of $RUNS run(s) unless marked"
	echo
	printf '%-44s %10s %10s %8s %14s %4s  %s\n' "measurement" "wall" "cpu" "peak RSS" "mfst (all) req" "exit" "note"
	printf '%s\n' "${ROWS[@]}"
	echo
	echo "ratios (wall; cpu in brackets)"
	echo "  conftest / gate, unpinned     $(ratio "${C1[0]}" "${G1[0]}")  [$(ratio "${C1[1]}" "${G1[1]}")]   RSS $(ratio "${C1[2]}" "${G1[2]}")"
	echo "  conftest / gate, pinned       $(ratio "${C2[0]}" "${G2[0]}")  [$(ratio "${C2[1]}" "${G2[1]}")]   RSS $(ratio "${C2[2]}" "${G2[2]}")"
	[[ -n ${K[0]:-} ]] && echo "  kubeconform / gate, pinned    $(ratio "${K[0]}" "${G2[0]}")  [$(ratio "${K[1]}" "${G2[1]}")]   RSS $(ratio "${K[2]}" "${G2[2]}")"
	echo "  (b) / (a)  crane loop over every ref / gate pin     $(ratio "$PB_WALL" "${PA[0]}")"
	echo "  (c) / (a)  crane loop over unique refs / gate pin   $(ratio "${PC[0]}" "${PA[0]}")"
	echo "  sequential floor (refs × delay, no process start): $(fmt_s "$FLOOR") = $(ratio "$FLOOR" "${PA[0]}") gate pin; crane pays ${CRANE_PER_REF} ms a reference"
	echo
	echo "goals"
	printf '%s\n' "${GOALS[@]}"
	echo
	echo "notes"
	printf '  %s\n' "${NOTES[@]}"
	if ((${#GOB[@]})); then
		echo
		echo "go test -bench 'Check10k|Resolve400x4000' -benchmem"
		printf '  %s\n' "${GOB[@]}"
	fi
} | tee "$W/summary.txt"
mkdir -p "$(dirname "$OUT")"
cp "$W/summary.txt" "$OUT"
echo "bench: summary saved to $OUT" >&2
