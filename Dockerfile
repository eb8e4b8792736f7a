# syntax=docker/dockerfile:1
# podpilot's container image: a static binary on distroless, running as the
# non-root user 65532 (what manifests/deployment.yaml's securityContext expects).
#
#   docker build -t ghcr.io/podpilot/podpilot:dev .
#
# Multi-platform: docker buildx build --platform linux/amd64,linux/arm64 .
# (the builder cross-compiles natively, with TARGETOS/TARGETARCH).
#
# Without Docker, `make image` builds the same image offline: bin/podpilot
# (the same flags as below) packed by hack/build-image.sh with the build
# machine's CA certificates into _output/images/podpilot.tar (docs/install.md).

FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
# VERSION is reported by --version and the API server's /version.
ARG VERSION=v0.0.0-dev
WORKDIR /src
# Dependencies first, so that a source change reuses the module layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${VERSION}" \
      -o /out/podpilot ./cmd/adapter

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /out/podpilot /podpilot
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/podpilot"]
