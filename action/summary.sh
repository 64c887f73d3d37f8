#!/usr/bin/env bash
# Writes a Markdown summary of a SARIF report (argument 1) and the gate's
# exit code (argument 2) to $GITHUB_STEP_SUMMARY, when it is set: the
# verdict, then a table of the findings by rule, then each error. Needs jq
# (on GitHub's runners).
set -euo pipefail
sarif=$1 code=$2
out=${GITHUB_STEP_SUMMARY:-}
[ -n "$out" ] || exit 0
case "$code" in
  0) verdict="PASS" ;;
  1) verdict="FAIL: violations" ;;
  2) verdict="usage error (exit 2)" ;;
  *) verdict="NO VERDICT (exit $code): the gate could not finish" ;;
esac
{
  echo "### kubectl-gate: $verdict"
  echo
  if [ -s "$sarif" ] && jq -e . "$sarif" >/dev/null 2>&1; then
    echo "| rule | level | findings |"
    echo "|---|---|---|"
    jq -r '.runs[0].results | group_by(.ruleId + " " + .level)[] | "| `\(.[0].ruleId)` | \(.[0].level) | \(length) |"' "$sarif"
    echo
    jq -r '[.runs[0].results[] | select(.level == "error") | .message.text] | .[:50][] | "- " + gsub("\\|"; "\\|")' "$sarif"
    jq -r '.runs[0].invocations[0].toolExecutionNotifications // [] | .[] | "- **" + .message.text + "**"' "$sarif"
  else
    echo "No report was written; see the step's log."
  fi
} >> "$out"
