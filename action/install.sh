#!/usr/bin/env bash
# Installs kubectl-gate from a release archive, verifying its sha256 against
# the release's checksums.txt before anything is unpacked. Used by the
# composite action (action.yml); runs the same on a laptop:
#   GATE_VERSION=v0.1.0 GATE_BIN_DIR=$HOME/bin action/install.sh
# GATE_BASE_URL overrides where the archives are read (any URL curl reads,
# file:// too: the tests install from `make dist`'s dist/).
set -euo pipefail

version=${GATE_VERSION:?GATE_VERSION is required (a release tag, e.g. v0.1.0)}
base=${GATE_BASE_URL:-https://github.com/kubectl-gate/kubectl-gate/releases/download/$version}
bin_dir=${GATE_BIN_DIR:-${RUNNER_TEMP:-/tmp}/kubectl-gate/bin}

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$os" in linux|darwin) ;; mingw*|msys*|cygwin*) os=windows ;; *) echo "kubectl-gate: unsupported OS $os" >&2; exit 1 ;; esac
case "$(uname -m)" in x86_64|amd64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) echo "kubectl-gate: unsupported architecture $(uname -m)" >&2; exit 1 ;; esac
archive="kubectl-gate_${os}_${arch}.tar.gz"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 3 -o "$work/checksums.txt" "$base/checksums.txt"
curl -fsSL --retry 3 -o "$work/$archive" "$base/$archive"
want=$(awk -v f="$archive" '$2 == f || $2 == "*"f {print $1}' "$work/checksums.txt")
if [ -z "$want" ]; then
  echo "kubectl-gate: $archive is not listed in checksums.txt" >&2
  exit 1
fi
got=$(sha256sum "$work/$archive" | awk '{print $1}')
if [ "$got" != "$want" ]; then
  echo "kubectl-gate: checksum mismatch for $archive: got $got, checksums.txt says $want" >&2
  exit 1
fi
mkdir -p "$bin_dir"
tar -xzf "$work/$archive" -C "$bin_dir"
"$bin_dir/kubectl-gate" version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$bin_dir" >> "$GITHUB_PATH"
fi
