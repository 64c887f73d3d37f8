#!/usr/bin/env bash
# Prints every Go fuzz target of the tree as ./package:FuzzName, one a line
# (make fuzz runs them all, so a new target cannot be left out of CI).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' cmd fn plugin internal |
	sed -E 's|^(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|./\1:\2|' | sort -u
