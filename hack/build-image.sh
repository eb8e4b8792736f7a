#!/usr/bin/env bash
# Builds container images offline, without a Docker engine: a static Go
# binary packed into one layer by hack/tools/image (go-containerregistry),
# running as 65532:65532, with no shell and no base image. Each image is a
# `docker save` tarball in _output/images/NAME.tar, which `docker load` and
# `ctr images import` read. The Dockerfile builds the same podpilot image for
# users with Docker (docs/install.md says how the two relate).
#
# Usage: hack/build-image.sh NAME...   (NAME from the table below)
#
# Environment:
#   IMAGE_REGISTRY  repository prefix (default localhost/podpilot)
#   IMAGE_TAG       tag (default dev; make passes its version)
#   VERSION         the version label (default IMAGE_TAG)
#   IMAGE_OUT       where the tarballs go (default _output/images)
#   PODPILOT_BINARY the podpilot binary to pack (default bin/podpilot)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGE_REGISTRY=${IMAGE_REGISTRY:-localhost/podpilot}
IMAGE_TAG=${IMAGE_TAG:-dev}
VERSION=${VERSION:-$IMAGE_TAG}
OUT=${IMAGE_OUT:-$PODPILOT_ROOT/_output/images}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

# The images: NAME PACKAGE CA (whether it carries the CA certificates).
# podpilot's binary is bin/podpilot from `make build` (the image test checks
# the two are byte-identical); the others are built here the same way.
IMAGES="
podpilot ./cmd/adapter  ca
pause    ./test/pause   -
workload ./test/workload -
"

# image_ref NAME prints the reference NAME's image is tagged with. The pause
# image's tag is fixed: containerd's sandbox_image names it.
image_ref() {
  if [[ $1 == pause ]]; then echo "$IMAGE_REGISTRY/pause:local"; else echo "$IMAGE_REGISTRY/$1:$IMAGE_TAG"; fi
}

builder() {
  local out=$PODPILOT_ROOT/_output/bin/image
  (cd "$PODPILOT_ROOT/hack/tools/image" && CGO_ENABLED=0 go build -trimpath -o "$out" .)
  echo "$out"
}

# build_one NAME PACKAGE CA
build_one() {
  local name=$1 pkg=$2 ca=$3 bin
  if [[ $name == podpilot ]]; then
    bin=${PODPILOT_BINARY:-$PODPILOT_ROOT/bin/podpilot}
    [[ -x $bin ]] || die "$bin is missing: run 'make build' first (make image does)"
  else
    bin=$PODPILOT_ROOT/_output/bin/$name
    (cd "$PODPILOT_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin" "$pkg")
  fi
  local args=(--tag "$(image_ref "$name")" --out "$OUT/$name.tar" --entrypoint "/$name"
    --file "$bin:/$name:0755" --user 65532:65532 --label "org.opencontainers.image.version=$VERSION"
    --label "org.opencontainers.image.title=$name")
  if [[ $ca == ca ]]; then
    [[ -r $CA_BUNDLE ]] || die "$CA_BUNDLE is missing: apt-get install ca-certificates"
    args+=(--file "$CA_BUNDLE:/etc/ssl/certs/ca-certificates.crt:0644")
  fi
  "$BUILDER" "${args[@]}" >&2
}

main() {
  [[ $# -gt 0 ]] || die "usage: $0 NAME... (one of: $(awk 'NF { printf "%s ", $1 }' <<<"$IMAGES"))"
  mkdir -p "$OUT"
  BUILDER=$(builder)
  local name row
  for name in "$@"; do
    row=$(awk -v n="$name" '$1 == n' <<<"$IMAGES")
    [[ -n $row ]] || die "no image named $name (one of: $(awk 'NF { printf "%s ", $1 }' <<<"$IMAGES"))"
    # shellcheck disable=SC2086 # the row's words are the arguments
    build_one $row
  done
}

main "$@"
