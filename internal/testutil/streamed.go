package testutil

// RolloutTargets and RolloutNamingThem are a render's two ends for the
// streamed check's tests: two Services and a Deployment first, the Rollout
// that names them (stableService, canaryService, workloadRef) last, so that
// they are released before it is read and must be read back whole. The
// stable Service selects none of the workload's pods: rollout-service-
// selector fires; its image is on a tag: image-digest fires.
const (
	RolloutTargets = `---
apiVersion: v1
kind: Service
metadata: {name: web-stable, namespace: shop}
spec: {selector: {app: other}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-canary, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "ghcr.io/shop/web:1"}]}
`
	RolloutNamingThem = `---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      steps: [{setWeight: 20}]
`
)
