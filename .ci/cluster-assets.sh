#!/usr/bin/env bash
# cluster-assets.sh — make sure a directory holds the kube-apiserver and etcd
# executables that the real-cluster tests (internal/testutil/cluster) start.
#
# Idempotent: binaries already present are kept. Progress goes to stderr; the
# last line on stdout is the directory, so callers can do
#     GATE_CLUSTER_ASSETS=$(bash .ci/cluster-assets.sh | tail -n1)
#
# Environment:
#   GATE_CLUSTER_ASSETS  target directory (default:
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gate/cluster-v1.37.2)
#
# kube-apiserver is built from k8s.io/kubernetes in a throw-away module in a
# temp dir (cold: ~6 min, ~2.7 GB RAM). etcd comes from Debian's etcd-server
# package when apt works, otherwise it is built from go.etcd.io/etcd. Nothing
# is written inside the repository.
set -euo pipefail

KUBE_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.16

ASSETS="${GATE_CLUSTER_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gate/cluster-${KUBE_VERSION}}"

log() { printf 'cluster-assets: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "go is not on PATH"
mkdir -p "$ASSETS" || die "create assets dir $ASSETS"
ASSETS="$(cd "$ASSETS" && pwd)"

# Serialise concurrent runs (e.g. two make invocations) on the same dir.
if command -v flock >/dev/null; then
	exec 9>"$ASSETS/.lock"
	flock 9
fi

# Never let the scratch builds switch toolchains or touch the caller's module.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"

SCRATCH=""
cleanup() {
	if [ -n "$SCRATCH" ]; then rm -rf "$SCRATCH"; fi
	SCRATCH=""
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

new_scratch() {
	cleanup
	SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gate-cluster-assets.XXXXXX")"
}

build_kube_apiserver() {
	local start gomod replaces
	start=$(date +%s)
	new_scratch
	log "kube-apiserver: resolving k8s.io/kubernetes@${KUBE_VERSION} staging modules"
	gomod="$(cd "$SCRATCH" && go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" |
		sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
	[ -f "$gomod" ] || die "download k8s.io/kubernetes@${KUBE_VERSION}: no go.mod found"
	replaces="$(grep '=> ./staging' "$gomod" |
		awk -v v="$STAGING_VERSION" '{print "\t" $1 " => " $1 " " v}' | sort -u)"
	[ -n "$replaces" ] || die "parse staging replaces from $gomod: none found"
	log "kube-apiserver: $(printf '%s\n' "$replaces" | wc -l) staging modules pinned to ${STAGING_VERSION}"

	cat >"$SCRATCH/go.mod" <<GOMOD
module gate.local/cluster-assets/kube-apiserver

go $(go env GOVERSION | sed 's/^go//')

require k8s.io/kubernetes ${KUBE_VERSION}

replace (
${replaces}
)
GOMOD
	cat >"$SCRATCH/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
	log "kube-apiserver: go mod tidy (downloads dependencies)"
	(cd "$SCRATCH" && go mod tidy) >&2 || die "tidy scratch module for kube-apiserver"
	log "kube-apiserver: go build (cold: ~6 min, ~2.7 GB RAM)"
	(cd "$SCRATCH" && go build -o "$SCRATCH/kube-apiserver" -ldflags "-s -w \
-X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} \
-X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=37" \
		k8s.io/kubernetes/cmd/kube-apiserver) >&2 || die "build k8s.io/kubernetes/cmd/kube-apiserver@${KUBE_VERSION}"
	mv -f "$SCRATCH/kube-apiserver" "$ASSETS/kube-apiserver.tmp"
	mv -f "$ASSETS/kube-apiserver.tmp" "$ASSETS/kube-apiserver"
	log "kube-apiserver: built in $(($(date +%s) - start)) s"
}

etcd_from_apt() {
	if [ ! -x /usr/bin/etcd ]; then
		command -v apt-get >/dev/null || return 1
		local sudo=""
		if [ "$(id -u)" != 0 ]; then
			command -v sudo >/dev/null || return 1
			sudo="sudo -n"
		fi
		log "etcd: apt-get install etcd-server"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || return 1
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >&2 || return 1
	fi
	[ -x /usr/bin/etcd ] || return 1
	/usr/bin/etcd --version >&2 || return 1
	cp -f /usr/bin/etcd "$ASSETS/etcd.tmp" && mv -f "$ASSETS/etcd.tmp" "$ASSETS/etcd"
}

etcd_from_source() {
	local start
	start=$(date +%s)
	new_scratch
	log "etcd: building go.etcd.io/etcd/server/v3@${ETCD_VERSION} from source"
	cat >"$SCRATCH/go.mod" <<GOMOD
module gate.local/cluster-assets/etcd

go $(go env GOVERSION | sed 's/^go//')

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
GOMOD
	cat >"$SCRATCH/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
	(cd "$SCRATCH" && go mod tidy && go build -ldflags "-s -w" -o "$SCRATCH/etcd" .) >&2 ||
		die "build go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
	mv -f "$SCRATCH/etcd" "$ASSETS/etcd.tmp" && mv -f "$ASSETS/etcd.tmp" "$ASSETS/etcd"
	log "etcd: built in $(($(date +%s) - start)) s"
}

if [ -x "$ASSETS/kube-apiserver" ]; then
	log "kube-apiserver: present in $ASSETS"
else
	build_kube_apiserver
fi

if [ -x "$ASSETS/etcd" ]; then
	log "etcd: present in $ASSETS"
elif ! etcd_from_apt; then
	log "etcd: apt route failed, falling back to a source build"
	etcd_from_source
fi

"$ASSETS/kube-apiserver" --version >&2 || die "run $ASSETS/kube-apiserver --version"
echo "$ASSETS"
