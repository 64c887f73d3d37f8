package livetest

// Manifests are the shop app's objects, as git holds them: what Install
// applies and WriteRender renders.
const Manifests = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: ` + WebImage + `
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: api
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: main
        image: ` + APIImage + `
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: tls
  namespace: shop
spec:
  secretName: tls
  dnsNames: [shop.example]
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}
`
