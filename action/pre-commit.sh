#!/usr/bin/env bash
# The pre-commit hook: for each changed file (the arguments), the nearest
# directory at or above it that holds a kustomization file, inside the
# repository; each such root is checked once with kubectl gate check -k.
# Files under no kustomization are not the gate's to check here.
set -euo pipefail
top=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
declare -A roots=()
for f in "$@"; do
  d=$(cd "$(dirname "$f")" 2>/dev/null && pwd) || continue
  while :; do
    for k in kustomization.yaml kustomization.yml Kustomization; do
      if [ -f "$d/$k" ]; then roots["$d"]=1; break 2; fi
    done
    [ "$d" = "$top" ] || [ "$d" = / ] && break
    d=$(dirname "$d")
  done
done
[ ${#roots[@]} -gt 0 ] || exit 0
args=()
for r in "${!roots[@]}"; do args+=(-k "$(realpath --relative-to=. "$r" 2>/dev/null || echo "$r")"); done
exec kubectl-gate check -q "${args[@]}"
