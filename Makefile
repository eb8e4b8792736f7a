# podpilot: a Prometheus metrics API server and embedded pod autoscaler.
# `make demo` and `make test` are all a fresh clone needs; every target
# installs or builds what it uses through its prerequisites.

SHELL := /usr/bin/env bash -o pipefail
export PATH := $(PATH):/usr/local/go/bin:$(shell go env GOPATH 2>/dev/null)/bin
export GOFLAGS := -buildvcs=false

# component-base requires a version that starts with vX.Y.Z.
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo "v0.1.0-dev+$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
VERSION_PKG := k8s.io/component-base/version
LDFLAGS := -X $(VERSION_PKG).gitVersion=$(VERSION) \
           -X $(VERSION_PKG).gitCommit=$(shell git rev-parse HEAD 2>/dev/null) \
           -X $(VERSION_PKG).buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

E2E_TIMEOUT ?= 40m
NODE_TIMEOUT ?= 20m
# The image tag: the version, with '+' (not allowed in a tag) as '-'.
IMAGE_TAG ?= $(subst +,-,$(VERSION))
E2E_FLAGS ?=
FUZZ_EXECS ?= 1000000
FUZZ_FLAGS ?= -fuzzminimizetime 1s
UNIT_PKGS = $(shell go list ./... | grep -v -e /test/e2e -e /test/node)

.PHONY: all
all: build

.PHONY: build
build: ## Build bin/podpilot: static and stripped, as the Dockerfile builds it (what the bench and e2e measure is what ships).
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)" -o bin/podpilot ./cmd/adapter

.PHONY: version
version: ## Print the version make build stamps into bin/podpilot.
	@echo $(VERSION)

.PHONY: tools
tools: prometheus ## Build etcd, kube-apiserver, kube-controller-manager, kubectl, kwok, helm and the custom-metrics-apiserver's test adapter (cached) and install Prometheus.
	hack/build-tools.sh
	hack/build-tools.sh test-adapter >/dev/null

.PHONY: prometheus
prometheus: ## Install Debian's Prometheus (prometheus, promtool) unless it is on PATH: the unit tests read backfilled TSDBs with it.
	hack/install-prometheus.sh

.PHONY: node-tools
node-tools: tools ## Build kube-scheduler, kubelet, kube-proxy and metrics-server (cached) and install Debian's containerd, runc, CNI plugins and iptables, for PODPILOT_NODE=real.
	hack/build-tools.sh node
	hack/install-node.sh

.PHONY: backend-tools
backend-tools: tools ## Build VictoriaMetrics and Thanos (cached, hack/tools) and install Debian's victoria-metrics (the floor), for make test-backends.
	hack/build-tools.sh backends
	hack/install-victoriametrics.sh

.PHONY: keda-tools
keda-tools: tools ## Build KEDA's operator and metrics server (cached, hack/tools/keda; about 10 minutes cold), for make test-keda.
	hack/build-tools.sh keda >/dev/null

.PHONY: image
image: build ## Build podpilot's image offline (no Docker): _output/images/podpilot.tar, tagged localhost/podpilot/podpilot:$(IMAGE_TAG).
	IMAGE_TAG=$(IMAGE_TAG) VERSION=$(VERSION) hack/build-image.sh podpilot

.PHONY: images
images: image ## Build every image the real node runs: podpilot's, the pause image and the demo's workload (see hack/build-image.sh).
	IMAGE_TAG=$(IMAGE_TAG) VERSION=$(VERSION) hack/build-image.sh pause workload

.PHONY: test
test: test-unit test-e2e ## Run the unit tests, then the e2e tests on a real local control plane.

.PHONY: test-unit
test-unit: prometheus ## Run the unit tests.
	go test -count=1 $(UNIT_PKGS)

.PHONY: test-e2e
test-e2e: tools keda-tools backend-tools build ## Run the e2e tests (the KEDA test included) and the backend tier on Thanos and Debian's VictoriaMetrics, as three streams with their own local control planes (hack/test-e2e.sh).
	E2E_TIMEOUT=$(E2E_TIMEOUT) E2E_FLAGS='$(E2E_FLAGS)' hack/test-e2e.sh

.PHONY: test-node
test-node: node-tools images ## Run the real-node tier (test/node): podpilot installed by its chart as pods on a kubelet node, Day 2 faults.
	go test -count=1 -timeout $(NODE_TIMEOUT) -v $(NODE_FLAGS) ./test/node/

.PHONY: test-backends
test-backends: backend-tools build ## Run the backend tier: the e2e cases that matter against Prometheus, VictoriaMetrics (release and Debian's), and Thanos (docs/backends.md).
	hack/test-backends.sh

KEDA_TIMEOUT ?= 20m

.PHONY: test-keda
test-keda: keda-tools build ## Run the KEDA tier (-tags keda): KEDA's operator and metrics server beside a podpilot that forwards external metrics to them, on a local control plane (docs/testing.md).
	go test -count=1 -timeout $(KEDA_TIMEOUT) -tags keda -v -run '^TestKEDA' $(E2E_FLAGS) ./test/e2e/

.PHONY: test-faults
test-faults: tools build ## Run the fault suite, long faults included (-tags faults), on a local control plane, and the controller's timed faults.
	go test -count=1 -timeout $(E2E_TIMEOUT) -tags faults -v -run '^TestFault' $(E2E_FLAGS) ./test/e2e/ ./pkg/autoscaler/controller/

FAULT_SHARDS ?= 3

.PHONY: test-faults-sharded
test-faults-sharded: ## make test-faults with every podpilot the e2e framework starts on --autoscaler-shards=$(FAULT_SHARDS) (PODPILOT_E2E_AUTOSCALER_SHARDS; docs/testing.md).
	PODPILOT_E2E_AUTOSCALER_SHARDS=$(FAULT_SHARDS) $(MAKE) test-faults

.PHONY: fuzz
fuzz: ## Fuzz the selector → PromQL path, the rule loader, the Prometheus answer decoder and the autoscaler's round (forecast + decision), FUZZ_EXECS executions each (not in CI; test-unit runs each target's seed corpus).
	go test -run '^$$' -fuzz '^FuzzRound$$' -fuzztime $(FUZZ_EXECS)x $(FUZZ_FLAGS) ./pkg/autoscaler/decision/
	go test -run '^$$' -fuzz '^FuzzSelectorToPromQL$$' -fuzztime $(FUZZ_EXECS)x $(FUZZ_FLAGS) ./pkg/provider/rules/
	go test -run '^$$' -fuzz '^FuzzLoadRules$$' -fuzztime $(FUZZ_EXECS)x $(FUZZ_FLAGS) ./pkg/provider/rules/
	go test -run '^$$' -fuzz '^FuzzDecodeAnswer$$' -fuzztime $(FUZZ_EXECS)x $(FUZZ_FLAGS) ./pkg/provider/prometheus/

.PHONY: demo
demo: tools build ## Run the demo: on a real node if this machine can run containers (hack/node-preflight.sh; installs the node's tools and builds the images), else on the kwok node.
	IMAGE_TAG=$(IMAGE_TAG) VERSION=$(VERSION) hack/demo.sh

BENCH_FLAGS ?=

.PHONY: bench
bench: tools build ## Benchmark on a local control plane; writes bench/results/<date>-<sha>.md (BENCH_FLAGS, PROMETHEUS_ADAPTER, BENCH_PODPILOT_ARGS).
	go build -o _output/bin/bench ./bench/cmd/bench
	_output/bin/bench $(BENCH_FLAGS)

.PHONY: bench-node
bench-node: node-tools images ## Benchmark podpilot on the real node at the defaults users run: load steps (cpu, custom metric) under a PodAutoscaler against the stock HPA on metrics-server and prometheus-adapter; writes bench/results/node-<date>-<sha>.md (BENCH_FLAGS=--tuned: both sync periods 5s).
	go build -o _output/bin/nodebench ./bench/cmd/nodebench
	_output/bin/nodebench --tag $(IMAGE_TAG) --prometheus-adapter="$$(hack/build-tools.sh prometheus-adapter)" $(BENCH_FLAGS)

.PHONY: bench-adapter
bench-adapter: tools build ## make bench with prometheus-adapter v0.12.0 (built from its module, pinned in hack/tools) as the extra baseline, and in scenario e also that adapter built on podpilot's library versions.
	go build -o _output/bin/bench ./bench/cmd/bench
	_output/bin/bench --prometheus-adapter="$$(hack/build-tools.sh prometheus-adapter)" \
		--prometheus-adapter-current="$$(hack/build-tools.sh prometheus-adapter-current)" $(BENCH_FLAGS)

.PHONY: local-up
local-up: tools ## Start a local control plane in _output/local-cluster and leave it running.
	hack/local-up.sh

.PHONY: local-down
local-down: ## Stop the local control plane started by `make local-up`.
	hack/local-down.sh

.PHONY: generate
generate: ## Regenerate deepcopy, the clientset/listers/informers and the CRD from pkg/apis.
	hack/update-codegen.sh

.PHONY: verify
verify: ## Check formatting, vet, generated code, go.mod, import rules and lint (golangci-lint, logcheck).
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...
	go vet -tags faults ./test/e2e/ ./pkg/autoscaler/controller/
	go vet -tags backends ./test/e2e/
	go vet -tags keda ./test/e2e/
	hack/verify-codegen.sh
	hack/verify-gomod.sh
	hack/verify-imports.sh
	hack/verify-lint.sh

.PHONY: clean
clean: ## Remove build output (the cached tool binaries stay; see clean-tools).
	rm -rf bin _output

.PHONY: clean-tools
clean-tools: ## Remove the cached tool binaries.
	source hack/lib.sh && rm -rf "$$TOOLS_CACHE"

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'
