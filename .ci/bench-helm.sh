#!/usr/bin/env bash
# Helm render + check of a 500-object chart: `check --chart` (in process)
# next to `helm template | check -f -`, wall and peak memory, paired runs.
# Called by `make bench` (GATE, HELM set); prints one summary line per mode.
set -euo pipefail
GATE=${GATE:?} HELM=${HELM:?} RUNS=${BENCH_RUNS:-3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
chart=$work/big
mkdir -p "$chart/templates"
printf 'apiVersion: v2\nname: big\nversion: 1.0.0\n' > "$chart/Chart.yaml"
printf 'count: 100\nimage: ghcr.io/example/app:1.0@sha256:%064d\n' 0 > "$chart/values.yaml"
# 5 objects per service: Deployment, Service, ConfigMap, ServiceAccount, PDB.
cat > "$chart/templates/svc.yaml" <<'T'
{{- range $i := until (int .Values.count) }}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc-{{ $i }}, namespace: {{ $.Release.Namespace }}}
spec:
  replicas: 2
  selector: {matchLabels: {app: svc-{{ $i }}}}
  template:
    metadata: {labels: {app: svc-{{ $i }}}}
    spec:
      serviceAccountName: svc-{{ $i }}
      containers: [{name: app, image: "{{ $.Values.image }}", ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc-{{ $i }}, namespace: {{ $.Release.Namespace }}}
spec: {selector: {app: svc-{{ $i }}}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: svc-{{ $i }}, namespace: {{ $.Release.Namespace }}}
data: {index: "{{ $i }}"}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: svc-{{ $i }}, namespace: {{ $.Release.Namespace }}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: svc-{{ $i }}, namespace: {{ $.Release.Namespace }}}
spec: {minAvailable: 1, selector: {matchLabels: {app: svc-{{ $i }}}}}
{{- end }}
T
measure() { # label, command…
  local t; t=$( { /usr/bin/time -f '%e %M' bash -c "$2" >/dev/null 2>"$work/err" || true; } 2>&1 | tail -1 )
  tail -1 "$work/err" | grep -q '^[0-9.]* [0-9]*$' && t=$(tail -1 "$work/err")
  echo "$1 $t"
}
for _ in $(seq "$RUNS"); do
  measure chart "'$GATE' check --chart '$chart' -n apps --expect-resources 500"
  measure pipe  "'$HELM' template big '$chart' -n apps | '$GATE' check -f - --expect-resources 500"
done | awk '{w[$1]+=$2; if ($3>m[$1]) m[$1]=$3; n[$1]++}
  END {for (k in w) printf "helm-500 %-5s wall %.2fs (mean of %d)  peak RSS %d MiB\n", k, w[k]/n[k], n[k], m[k]/1024;
       if (w["pipe"]>0) printf "helm-500 ratio chart/pipe wall %.2f\n", w["chart"]/w["pipe"]}'
