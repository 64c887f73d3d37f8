#!/bin/sh
# Stands in for a kyverno whose PolicyReport passes only objects the render
# does not hold. Only a stand-in gives this hostile answer on demand.
cat <<'REPORT'
apiVersion: wgpolicyk8s.io/v1alpha2
kind: ClusterPolicyReport
metadata: {name: merged}
results:
- policy: require-pinned
  rule: pinned
  result: pass
  resources:
  - {apiVersion: apps/v1, kind: Deployment, name: elsewhere, namespace: shop}
summary: {pass: 1}
REPORT
