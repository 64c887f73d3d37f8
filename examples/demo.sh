#!/usr/bin/env bash
# The gate end to end, offline, on the examples (run it with `make demo`).
#   1. the gate on the render: red on the overlay that re-tags to latest (and
#      it names that overlay), green on the one that pins — by the plugin,
#      through a pipe, and inside `kustomize build` as a validator;
#   2. pinning against a registry on loopback: check red → pin → check
#      green → Pin as a kustomize transformer → the digests written back.
# Needs bin/kubectl-gate, bin/gate-fn, bin/registry and $KUSTOMIZE (make demo
# builds them).
set -uo pipefail
cd "$(dirname "$0")/.."
KUSTOMIZE=${KUSTOMIZE:-kustomize}
GATE=bin/kubectl-gate

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; local rc=$?; printf '(exit %d)\n' "$rc"; return 0; }
expect() { # expect CODE CMD...: run, and stop the demo if the exit code differs
  local want=$1; shift
  printf '$ %s\n' "$*"; "$@"; local rc=$?
  printf '(exit %d)\n' "$rc"
  if [ "$rc" != "$want" ]; then echo "demo: expected exit $want" >&2; exit 1; fi
}

bold "1. A grep of the source looks at the wrong thing"
run grep -rn ':latest' examples/base examples/overlays/prod-retag
echo "-> grep blames the base (which every overlay pins) and misses prod-retag, whose"
echo "   'newTag: latest' re-tags the worker to latest in the render."

bold "2. The gate looks at the render: red on prod-retag, naming the overlay"
expect 1 $GATE check -k examples/overlays/prod-retag
bold "   ... and green on prod (the base says latest, the overlay pins a digest)"
expect 0 $GATE check -k examples/overlays/prod

bold "3. The same through a pipe"
printf '$ %s\n' "$KUSTOMIZE build --enable-alpha-plugins --enable-exec examples/overlays/prod | $GATE check -f -"
"$KUSTOMIZE" build --enable-alpha-plugins --enable-exec examples/overlays/prod | $GATE check -f -
echo "(exit ${PIPESTATUS[1]})"

bold "4. The same inside kustomize build, with the Gate under validators:"
expect 1 "$KUSTOMIZE" build --enable-alpha-plugins --enable-exec examples/overlays/prod-retag
printf '$ %s\n' "$KUSTOMIZE build --enable-alpha-plugins --enable-exec examples/overlays/prod | grep -E '^kind|image:'"
"$KUSTOMIZE" build --enable-alpha-plugins --enable-exec examples/overlays/prod | grep -E '^kind|image:'
echo "-> the validator emitted items: [] and kustomize kept every resource"

bold "5. Pinning: an OCI registry on loopback stands in for ghcr.io"
tmp=$(mktemp -d)
trap 'kill $REG 2>/dev/null; rm -rf "$tmp"' EXIT
bin/registry -seed demo -addr-file "$tmp/addr" 2>/dev/null & REG=$!
for _ in $(seq 50); do [ -s "$tmp/addr" ] && break; sleep 0.1; done
ADDR=$(cat "$tmp/addr")
cat > "$tmp/gate.yaml" <<YAML
apiVersion: kubectl-gate.dev/v1alpha1
kind: Gate
metadata: {name: demo}
spec:
  images:
    mirrors: {ghcr.io: $ADDR}      # look-ups for ghcr.io go to the loopback registry
    insecureRegistries: [$ADDR]    # plain HTTP for that host only
YAML
echo "registry on $ADDR; config $tmp/gate.yaml maps ghcr.io to it"
expect 1 $GATE check -k examples/overlays/staging --config "$tmp/gate.yaml"
printf '$ %s\n' "$GATE pin -k examples/overlays/staging --config … > pinned.yaml"
$GATE pin -k examples/overlays/staging --config "$tmp/gate.yaml" > "$tmp/pinned.yaml"; echo "(exit $?)"
grep 'image:' "$tmp/pinned.yaml"
expect 0 $GATE check -f "$tmp/pinned.yaml"
bold "   verify: do the pinned digests exist? the worker's base digest is not in this registry"
expect 3 $GATE check -f "$tmp/pinned.yaml" --config "$tmp/gate.yaml" --digest verify

bold "6. Pin as the last transformer, inside kustomize build"
mkdir -p "$tmp/overlay"
cp -r examples/base "$tmp/base"
sed 's#../../base#../base#' examples/overlays/staging/kustomization.yaml > "$tmp/overlay/kustomization.yaml"
printf 'transformers:\n  - pin.yaml\n' >> "$tmp/overlay/kustomization.yaml"
cat > "$tmp/overlay/pin.yaml" <<YAML
apiVersion: kubectl-gate.dev/v1alpha1
kind: Pin
metadata:
  name: pin
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: $PWD/bin/gate-fn
spec:
  images:
    mirrors: {ghcr.io: $ADDR}
    insecureRegistries: [$ADDR]
YAML
printf '$ %s\n' "$KUSTOMIZE build --enable-alpha-plugins --enable-exec <staging + Pin> | grep image:"
"$KUSTOMIZE" build --enable-alpha-plugins --enable-exec "$tmp/overlay" | grep -E 'image:|pinned'

bold "7. Keep the source pinned: write the digests into the kustomization"
cp "$tmp/overlay/kustomization.yaml" "$tmp/before.yaml"
expect 0 $GATE pin --write-kustomization "$tmp/overlay" --config "$tmp/gate.yaml" -o json >/dev/null
diff -u "$tmp/before.yaml" "$tmp/overlay/kustomization.yaml"
echo
echo "demo: done — red where it must be, green where it may be, pinned by digest."
