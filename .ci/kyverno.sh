#!/usr/bin/env bash
# kyverno.sh — builds the Kyverno CLI (kubectl-kyverno, used as `kyverno
# apply`) for the policy runner's tests and `make bench`, and prints its path.
#
# Usage: bash .ci/kyverno.sh DEST_DIR     # DEST_DIR/kyverno is the binary
#
# `go install github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno@VERSION`
# fails because kyverno's go.mod has replace directives, so the CLI is built
# from a throw-away module outside the repository that requires kyverno and
# copies its replace lines. Cold build: ~5 min alone on 2 cores, much longer
# beside other builds. Nothing is written inside the repository.
set -euo pipefail

KYVERNO_VERSION="${KYVERNO_VERSION:-v1.19.1}"
DEST="${1:?usage: kyverno.sh DEST_DIR}"

log() { printf 'kyverno: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -x "$DEST/kyverno" ]; then echo "$DEST/kyverno"; exit 0; fi
command -v go >/dev/null || die "go is not on PATH"
mkdir -p "$DEST"
# Serialise concurrent builds into the same directory.
exec 9>"$DEST/.lock"
flock 9
if [ -x "$DEST/kyverno" ]; then echo "$DEST/kyverno"; exit 0; fi

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gate-kyverno.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod
start=$(date +%s)
gomod="$(cd "$SCRATCH" && go mod download -json "github.com/kyverno/kyverno@${KYVERNO_VERSION}" |
	sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
[ -f "$gomod" ] || die "download kyverno@${KYVERNO_VERSION}: no go.mod found"
{
	printf 'module gate.local/peers/kyverno\n\ngo %s\n\n' "$(go env GOVERSION | sed 's/^go//')"
	printf 'require github.com/kyverno/kyverno %s\n\n' "$KYVERNO_VERSION"
	sed -n '/^replace (/,/^)/p' "$gomod"
	grep -E '^replace [^(]' "$gomod" || true
} >"$SCRATCH/go.mod"
cat >"$SCRATCH/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno"
GO
log "go mod tidy (downloads dependencies)"
(cd "$SCRATCH" && go mod tidy) >&2 || die "tidy the scratch module for kyverno ${KYVERNO_VERSION}"
log "go build kubectl-kyverno ${KYVERNO_VERSION} (cold: ~5 min alone)"
(cd "$SCRATCH" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$DEST/kyverno.tmp" github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno) >&2 ||
	die "build kubectl-kyverno ${KYVERNO_VERSION}"
mv "$DEST/kyverno.tmp" "$DEST/kyverno"
log "built in $(( $(date +%s) - start )) s"
echo "$DEST/kyverno"
