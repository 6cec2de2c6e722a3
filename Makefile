# mcpkit: the two commands a new user needs are `make run` and `make test`.
GO ?= go
ADDR ?= 127.0.0.1:8080

.PHONY: run test vet bench conformance interop fmt lint cluster-test fuzz stress test-apps

## run: serve the hello example over Streamable HTTP on $(ADDR), endpoint /mcp. The binary is
## built into bin/ and exec'd, so the server is make's own child: stopping make (Ctrl-C, or a
## SIGTERM to make alone) stops the server too and frees the port (go run would leave it behind).
run:
	$(GO) build -o bin/hello ./examples/hello
	exec bin/hello -http $(ADDR)

## test: go vet, then every test with the race detector
test: vet
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## lint: go vet, staticcheck and golangci-lint (.golangci.yml) at pinned versions, built once into .tools/bin
lint:
	bash scripts/lint.sh

## bench: the benchmarks, with allocations
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-peers: the same echo tool served by a bare net/http handler, mcpkit, go-sdk and mcp-go
## (module bench/) on both lifecycles, and mcpkit with its sessions on Redis, loaded with wrk on
## loopback in alternating rounds (ROUNDS, DURATION; about 8 minutes by default), plus in-process
## ns/B/allocs per request, and CPU profiles with PROFILE=DIR; needs wrk, taskset and
## redis-server, not part of test or CI
.PHONY: bench-peers
bench-peers:
	bash scripts/bench-peers.sh

## conformance: the official MCP conformance suites against examples/everything
conformance:
	bash scripts/conformance.sh

## interop: five clients against examples/everything (HTTP and stdio): the TypeScript SDK 1.x
## client (legacy), the v2 client, go-sdk, mcp-go and the MCP Inspector CLI (both lifecycles); then
## the kit's Go client against examples/everything and the TypeScript reference server
interop:
	bash scripts/interop.sh
	bash scripts/client-interop.sh

## test-apps: the MCP Apps browser test: examples/apps served for real, a host page on the official
## TypeScript client and host bridge (@modelcontextprotocol/ext-apps, installed and bundled by
## scripts/apps-host.sh) in headless Chromium (Debian's chromium), in both lifecycles; it logs
## the path of its screenshots
test-apps:
	bash scripts/apps-host.sh
	MCPKIT_REQUIRE_BINARIES=1 $(GO) test -race -count=1 -run 'TestBrowser|TestPublishedSchema' -v ./examples/apps ./ext/apps

## cluster-test: three replicas of examples/everything behind nginx, on one Redis, a Redis Cluster
## and Sentinel: the conformance suites through the proxy (one Redis and the Cluster), the redisstore
## tests on the Cluster, answers and streams across replicas, a Redis primary killed under traffic
## (Cluster and Sentinel), one replica killed
cluster-test:
	bash scripts/cluster.sh

## fuzz: every fuzz target for FUZZTIME each (default 30s); the seeds also run in make test
FUZZTIME ?= 30s
FUZZ_TARGETS = ./core:FuzzDecodeMessage ./core:FuzzDecodeBatch ./core:FuzzCheckJSON \
	./middleware:FuzzFramingParser ./mcphttp:FuzzHTTPStack ./stdio:FuzzServe
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz: $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## stress: a bounded load and fault run against examples/everything on loopback (STRESSFLAGS=-short for the CI size):
## session flood, stalled readers, disconnect storm, hostile requests, a task flood from one caller, then two
## replicas on a redis-server of its own, one killed with SIGKILL mid-work (skipped without redis-server)
STRESSFLAGS ?=
stress:
	$(GO) build -o bin/everything ./examples/everything
	$(GO) run ./internal/stress -fixture bin/everything $(STRESSFLAGS)
