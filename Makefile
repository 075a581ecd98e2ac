# deadbolt: `make scenario` and `make test` set up whatever is missing first.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
# Ryuk needs an image pull; deadbolt removes its own containers.
export TESTCONTAINERS_RYUK_DISABLED := true

BIN := bin/deadbolt
# DEADBOLT_REDIS_IMAGE selects another image (e.g. an official Redis image
# where a registry is reachable); otherwise the local one is built.
IMAGE := deadbolt/redis:7.0

.PHONY: all image build test scenario bench vet clean

all: build

image:
ifeq ($(DEADBOLT_REDIS_IMAGE),)
	@cluster/image/build.sh $(IMAGE)
else
	@echo "using $(DEADBOLT_REDIS_IMAGE) from DEADBOLT_REDIS_IMAGE"
endif

build:
	go build -o $(BIN) ./cmd/deadbolt

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...

test: image vet
	go test -count=1 -timeout 15m ./...

scenario: image build
	$(BIN) scenario

bench: image
	go test -run '^$$' -bench . -benchmem ./locks/...

clean:
	rm -rf bin store
