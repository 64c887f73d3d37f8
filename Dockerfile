# The gate-fn KRM function image (README "Use: the KRM function inside kustomize"). List it in a kustomization:
#   annotations:
#     config.kubernetes.io/function: |
#       container:
#         image: ghcr.io/kubectl-gate/gate-fn:v0.1.0
#         network: true   # only for kind: Pin or digest: verify (registry access)
# Build: docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=v0.1.0 .
# `make dist-fn` builds the same static binaries; the tests in krew/ run them.

# Both bases are pinned by digest, as the gate asks of every image it checks:
# a rebuild of this commit starts from the same bytes, whatever the tags say
# later. The tag stays for the reader (Docker pulls by the digest). Move them
# together, deliberately:
#   crane digest golang:1.26
#   crane digest gcr.io/distroless/static-debian12:nonroot
# krew/dockerfile_test.go fails on a FROM without a digest.

# The builder runs on the build machine and cross-compiles for the target.
FROM --platform=$BUILDPLATFORM golang:1.26@sha256:3aff6657219a4d9c14e27fb1d8976c49c29fddb70ba835014f477e1c70636647 AS build
# Set by BuildKit from --platform; empty (the build machine's) otherwise.
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: no cgo, so the binary needs nothing from the base image but CA
# certificates (for registry access), which distroless/static has.
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" \
    -o /gate-fn ./cmd/gate-fn

FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
ARG VERSION=dev
LABEL org.opencontainers.image.title="gate-fn" \
      org.opencontainers.image.description="kubectl-gate KRM function: a deploy gate on rendered manifests" \
      org.opencontainers.image.source="https://github.com/kubectl-gate/kubectl-gate" \
      org.opencontainers.image.url="https://github.com/kubectl-gate/kubectl-gate" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /gate-fn /gate-fn
# nobody (65534:65534), numeric so that runAsNonRoot can verify it.
# kustomize runs container functions as `docker run --user nobody` (unless
# --as-current-user); the image defaults to the same user, so a
# `docker run -i` by hand runs as kustomize does. distroless's /etc/passwd
# has nobody (HOME=/nonexistent): gate-fn writes no files. The :nonroot base
# keeps the image non-root even if this line is dropped.
USER 65534:65534
ENTRYPOINT ["/gate-fn"]
