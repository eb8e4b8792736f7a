// Module image is the Go-native image builder behind `make image`: it packs
// static binaries into an image tarball without a Docker engine or a
// registry, with go-containerregistry. It is never imported by the main module.
module github.com/podpilot/podpilot/hack/tools/image

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
