# deadbolt: `make scenario` and `make test` set up whatever is missing first.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
# Ryuk needs an image pull; deadbolt removes its own containers.
export TESTCONTAINERS_RYUK_DISABLED := true

BIN := bin/deadbolt
# Each client process is the lean deadbolt-client (the driver protocol and
# deadbolt's locks, nothing else), which deadbolt runs from beside itself.
CLIENT_BIN := bin/deadbolt-client
# DEADBOLT_REDIS_IMAGE selects another image (e.g. an official Redis image
# where a registry is reachable); otherwise the local one is built.
# Recipes read it from the environment, never pasted into a shell line.
export DEADBOLT_REDIS_IMAGE
# SERVER picks the server (redis-7.0, the default, redis-8.0 or
# valkey-8.1; deadbolt run --help lists them): `make image SERVER=valkey-8.1`
# builds its image, `make scenario SERVER=valkey-8.1` runs the suite on it.
# Read from the environment too.
export SERVER
# SEED fixes scenario-stress's seed; read from the environment too.
export SEED

.PHONY: all image build test scenario matrix audit scenario-stress stress-deps redispy-deps bench vet clean test-deps

all: build

image:
ifeq ($(DEADBOLT_REDIS_IMAGE),)
	@cluster/image/build.sh "$${SERVER:-redis-7.0}"
else ifneq ($(SERVER),)
	@echo "SERVER and DEADBOLT_REDIS_IMAGE both pick the image: give one" >&2; exit 2
else
	@printf 'using %s from DEADBOLT_REDIS_IMAGE\n' "$$DEADBOLT_REDIS_IMAGE"
endif

build:
	go build -o $(BIN) ./cmd/deadbolt
	go build -o $(CLIENT_BIN) ./cmd/deadbolt-client

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...

# The driver conformance test runs a minimal Python driver beside the Go one;
# the report test opens report.html and index.html in headless Chromium.
test-deps:
	@command -v python3 >/dev/null 2>&1 || { \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing python3 with apt-get"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends python3 >/dev/null; }
	@command -v chromium >/dev/null 2>&1 || { \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing chromium with apt-get"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium >/dev/null; }

# The redis-py driver (drivers/redispy) runs on /usr/bin/python3 with
# Debian's python3-redis: its CI scenarios and its conformance test need it.
redispy-deps:
	@/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || { \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing python3-redis with apt-get"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends python3-redis >/dev/null; }

# examples/extend is a module of its own (a lock, a fault, a workload and a
# checker from outside deadbolt, and the whole CLI with them): it is
# vetted and tested too, its container test included.
test: image vet test-deps redispy-deps
	go test -count=1 -timeout 20m ./...
	cd examples/extend && GOWORK=off go vet ./... && GOWORK=off go test -count=1 -timeout 10m ./...

# store/junit.xml is the suite's results for CI systems; store/index.html
# lists every run, store/latest/report.html is the last one's page. Four
# at a time (the longest first, a kept cluster's run before a fresh one's):
# runs mostly wait on leases and faults, and every verdict was measured
# four at a time beside two CPU hogs (make scenario-stress), a heavier load.
scenario: image build redispy-deps
	$(BIN) scenario --parallel 4 --junit store/junit.xml $${SERVER:+--server "$$SERVER"}

# The lock x failure matrix of the Redlock debate: every lock of the debate
# under every failure, three seeds a cell; store/matrix.html and
# store/matrix.md are the table, store/junit-matrix.xml one case a run.
# Five at a time: 72 cells x 3 seeds are 216 runs, most of them one master
# and two clients that wait on leases; the CI suite's verdicts were proven
# four at a time beside two CPU hogs, a heavier load.
# MATRIX_FLAGS adds flags (e.g. --locks simple,redlock --seed 1).
matrix: image build redispy-deps
	$(BIN) matrix --seeds 3 --parallel 5 --junit store/junit-matrix.xml $${SERVER:+--server "$$SERVER"} $(MATRIX_FLAGS)

# The audit of lock libraries: every library version `deadbolt locks`
# lists under every failure of the matrix and in every finding that
# judges it, as AUDIT_SHARDS shards side by side (each its own store, as
# CI jobs would run them), merged into store/audit: audit.html, audit.md,
# index.html, junit.xml. One seed a cell (SEED, default 1, the same in
# every shard, or the merge refuses them); AUDIT_FLAGS adds flags (e.g.
# --libraries redsync@v4.0.3,redsync@v4.0.4). The first run builds every
# library's driver (a minute or two; cached after).
AUDIT_SHARDS ?= 4
audit: image build redispy-deps
	@rm -rf store/audit store/audit-shard-*; status=0; pids=""; \
	for i in $$(seq $(AUDIT_SHARDS)); do \
	  mkdir -p store/audit-shard-$$i; \
	  $(BIN) audit --shard $$i/$(AUDIT_SHARDS) --parallel 2 --seed $${SEED:-1} --store store/audit-shard-$$i \
	    --junit store/audit-shard-$$i/junit.xml $(AUDIT_FLAGS) > store/audit-shard-$$i.log 2>&1 & pids="$$pids $$!"; \
	done; \
	for p in $$pids; do wait $$p || status=$$?; done; \
	$(BIN) report --merge --out store/audit $$(for i in $$(seq $(AUDIT_SHARDS)); do echo store/audit-shard-$$i; done) || exit $$?; \
	echo "shards' logs: store/audit-shard-*.log"; exit $$status

# The CI suite as a loaded machine runs it: STRESS CPU hogs (Debian's
# stress-ng, installed when missing; two by default, STRESS=8 for a
# machine four times oversubscribed) on the 2 cores, and STRESS_IO I/O
# hogs (none by default), four scenarios at a time. A verdict must not
# depend on an idle machine. SEED=N fixes the seed;
# store/junit-stress.xml is the suite's results.
STRESS ?= 2
STRESS_IO ?= 0
stress-deps:
	@command -v stress-ng >/dev/null 2>&1 || { \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing stress-ng with apt-get"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends stress-ng >/dev/null; }

scenario-stress: image build stress-deps redispy-deps
	@stress-ng --cpu $(STRESS) $(if $(filter-out 0,$(STRESS_IO)),--hdd $(STRESS_IO)) --quiet & hogs=$$!; trap 'kill $$hogs 2>/dev/null; wait $$hogs 2>/dev/null' EXIT; \
	$(BIN) scenario --parallel 4 --junit store/junit-stress.xml $${SEED:+--seed "$$SEED"} $${SERVER:+--server "$$SERVER"}

# Every lock's acquire+release cycle next to the bare-commands ceiling, the
# client protocol's cycle next to the same lock in-process, and the checker
# at scale (a generated 1M-line history read and checked; one contended key
# with a planted double hold), and each topology's start (independent,
# Sentinel, Redis Cluster) from nothing to healthy.
# BENCH_COUNT runs of the whole suite, one `go test` each (-count 1) rather
# than -count N: machine noise comes in bursts, and runs of one lock back to
# back would share a burst, so the locks take turns. `deadbolt bench` prints
# the medians and the targets; the raw output stays in store/bench/.
BENCH_COUNT ?= 5
bench: image
	@mkdir -p store/bench
	@set -o pipefail; out=store/bench/$$(date +%Y%m%dt%H%M%S).txt; \
	for i in $$(seq $(BENCH_COUNT)); do \
	  echo "bench run $$i of $(BENCH_COUNT)" >&2; \
	  go test -run '^$$' -bench . -benchmem -count 1 -timeout 15m ./locks/ ./client/ ./checker/ ./cluster/ || exit 1; \
	done | tee $$out | go run ./cmd/deadbolt bench; \
	status=$$?; echo "raw output: $$out"; exit $$status

clean:
	rm -rf bin store
