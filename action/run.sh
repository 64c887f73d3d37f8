#!/usr/bin/env bash
# Runs kubectl-gate for the composite action: GATE_COMMAND (check|diff) with
# GATE_ARGS (split on blanks, as a shell would without quotes), --config
# GATE_CONFIG when set, -o GATE_FORMAT into a report file; prints the text
# verdict to the log; sets the step outputs exit-code and report, and writes
# the summary (summary.sh). It exits 0 itself: the action's last step fails
# on the gate's exit code after the SARIF was uploaded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${GATE_COMMAND:-check}
case "$cmd" in check|diff) ;; *) echo "kubectl-gate: command must be check or diff, not $cmd" >&2; echo "exit-code=2" >> "${GITHUB_OUTPUT:-/dev/null}"; exit 0 ;; esac
format=${GATE_FORMAT:-sarif}
report=${RUNNER_TEMP:-/tmp}/kubectl-gate.$format
read -r -a args <<< "${GATE_ARGS:-}"
if [ -n "${GATE_CONFIG:-}" ]; then args+=(--config "$GATE_CONFIG"); fi
kubectl-gate "$cmd" "${args[@]}" -o "$format" > "$report"
code=$?
echo "kubectl gate $cmd ${args[*]}: exit $code (report: $report)"
{ echo "exit-code=$code"; echo "report=$report"; } >> "${GITHUB_OUTPUT:-/dev/null}"
if [ "$format" = sarif ]; then "$here/summary.sh" "$report" "$code" || true; fi
exit 0
